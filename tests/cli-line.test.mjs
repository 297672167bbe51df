// The command line shown under the lab ("Run this figure from the command line") must paste
// into a POSIX shell as the same arguments: a file name with a single quote in it, such as
// bob's.log, is quoted as 'bob'\''s.log', as `ratelab probe` quotes its own command.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { shellWord, commandLine } from '../www/js/cli.js';

test('plain words stay as they are; others are single-quoted, each quote closed, escaped and reopened', () => {
  assert.equal(shellWord('--traffic'), '--traffic');
  assert.equal(shellWord('steady:load=0.8'), 'steady:load=0.8');
  assert.equal(shellWord('replay:file=access.log,format=auto'), 'replay:file=access.log,format=auto');
  assert.equal(shellWord("bob's.log"), "'bob'\\''s.log'");
  assert.equal(shellWord("replay:file=bob's log.txt"), "'replay:file=bob'\\''s log.txt'");
  assert.equal(shellWord("''"), "''\\'''\\'''");
  assert.equal(shellWord(''), "''");
  assert.equal(shellWord('a b'), "'a b'");
  assert.equal(shellWord('$HOME'), "'$HOME'");
  assert.equal(commandLine(['simulate', '--seed', '7']), 'ratelab simulate --seed 7');
});

test('a POSIX shell reads the command line back as the same arguments', () => {
  const args = ['simulate', "replay:file=bob's.log", 'it\'s "quoted" $HOME `x` \\ ;|&', "'", "a'b'c", '', '--seed', '7', 'tab\there', 'new\nline'];
  const line = commandLine(args);
  // The shell prints each argument after `ratelab` NUL-terminated.
  const out = execFileSync('/bin/sh', ['-c', `ratelab() { printf '%s\\0' "$@"; }; ${line}`], { encoding: 'utf8' });
  assert.deepEqual(out.split('\0').slice(0, -1), args);
});
