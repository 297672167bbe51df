// The book, published with the page under docs/: the page links to it, its chapters open
// from its contents with nothing fetched from another origin, a link between chapters lands
// on its heading, and axe-core finds nothing in light or dark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, open, root } from './helpers.mjs';

setup();

for (const colorScheme of ['light', 'dark']) {
  test(`the page links to the book, whose chapters and anchors land (${colorScheme})`, async (t) => {
    const { page, problems } = await open(t, { colorScheme, bypassCSP: true });
    await page.click('[data-testid=docs-link]');
    await page.waitForSelector('nav[aria-label="The book"]');
    assert.equal(await page.textContent('main h1'), 'Introduction');
    // Waited for: the heading can be there before the picture has arrived. `decode` settles
    // once the picture has loaded and decoded, and fails if it cannot.
    assert.ok(await page.locator('main img[src="images/page.png"]').evaluate((img) => img.decode().then(() => img.naturalWidth > 0, () => false)), 'the picture of the page loads');
    // A chapter from the contents, marked as the current one.
    await page.click('nav a[href="memory.html"]');
    await page.waitForSelector('main h1#memory');
    assert.equal(await page.getAttribute('nav a[href="memory.html"]', 'aria-current'), 'page');
    // A link between chapters, to a heading of another.
    await page.goto(page.url().replace(/memory\.html$/, 'index.html'));
    await page.click('main a[href="fleets.html"]');
    await page.waitForSelector('main h2#laws');
    await page.goto(page.url().replace(/fleets\.html.*$/, 'fleets.html#laws'));
    assert.ok(await page.locator('#laws').evaluate((h) => h.getBoundingClientRect().top < 100), 'the anchor scrolls to its heading');
    // Back to the page.
    await page.click('nav a[href="../"]');
    await page.waitForSelector('#lab[data-ready=true]');
    // Keyboard: the skip link is the first stop, and it is shown when focused.
    await page.goto(page.url().replace(/\/?$/, '/docs/'));
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.className), 'skip');
    await page.addScriptTag({ content: readFileSync(join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
    const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    assert.deepEqual(results.violations.map((v) => `${v.id}: ${v.nodes.length}`), []);
    assert.deepEqual(problems, []);
  });
}
