/*
 * Faithful re-statement of the decision arithmetic of vmod_vsthrottle.c as
 * shipped in Debian bookworm varnish-modules 0.20.0-2 (source identical to
 * varnish/varnish-modules blob at commit b407be85; see FINDINGS.md), with the
 * clock (VTIM_mono) replaced by an explicit `now` argument.  Same C types
 * (double / long), same expression order, so same IEEE-754 rounding and the
 * same (long) truncation (cvttsd2si on amd64).
 *
 * Build: gcc -O2 -Wall -o sim sim.c
 * Usage: ./sim            -> run the built-in scenarios
 *        ./sim replay L P B [rem] < times.txt   -> one time (seconds, double) per
 *           line, prints "t decision" for is_denied(key, L, P, B)
 *           ("rem": call remaining() before each is_denied, like /rem)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <math.h>

struct tbucket {
	int exists;
	double last_used;
	double period;
	double block;
	long tokens;
	long capacity;
};

/* tb_alloc (src lines 95-110) */
static void
tb_alloc(struct tbucket *tb, long limit, double period, double now)
{
	tb->exists = 1;
	tb->last_used = now;
	tb->period = period;
	tb->block = 0.;
	tb->tokens = limit;
	tb->capacity = limit;
}

static void
get_bucket(struct tbucket *b, long limit, double period, double now)
{
	if (!b->exists)
		tb_alloc(b, limit, period, now);
}

/* calc_tokens (src lines 132-142) */
static void
calc_tokens(struct tbucket *b, double now)
{
	double delta = now - b->last_used;
	assert(delta >= 0);

	b->tokens += (long) ((delta / b->period) * b->capacity);
	if (b->tokens > b->capacity)
		b->tokens = b->capacity;
}

/* vmod_is_denied (src lines 158-206), minus locking / digest / GC */
static int
is_denied(struct tbucket *b, long limit, double period, double block, double now)
{
	unsigned ret = 1, blocked = 0;

	get_bucket(b, limit, period, now);
	calc_tokens(b, now);
	if (block > 0. && now < b->block) {
		blocked = 1;
		b->last_used = now;
	}
	if (b->tokens > 0) {
		b->tokens -= 1;
		if (!blocked)
			ret = 0;
		b->last_used = now;
	}
	else if (block > 0. && !blocked)
		b->block = now + block;

	if (block > 0. && !ret && !blocked)
		b->block = 0.;
	return (ret);
}

/* vmod_remaining (src lines 250-276): NOTE mutates tokens, not last_used */
static long
remaining(struct tbucket *b, long limit, double period, double now)
{
	unsigned ret;
	get_bucket(b, limit, period, now);
	calc_tokens(b, now);
	ret = b->tokens;
	return (ret);
}

/* vmod_blocked (src lines 278-304) */
static double
blocked_left(struct tbucket *b, long limit, double period, double now)
{
	double ret;
	get_bucket(b, limit, period, now);
	ret = b->block - now;
	if (ret <= 0.)
		ret = 0.;
	return (ret);
}

/* ------------------------------------------------------------------ */

#define MAXA 100000
static double adm[MAXA];
static int nadm;

/* max number of admitted requests in any window (t-W, t] */
static int
max_window(double W, double *from, double *to)
{
	int i, j = 0, best = 0;
	/* windows ending at an admission are the only candidates */
	for (i = 0; i < nadm; i++) {
		while (adm[j] <= adm[i] - W)
			j++;
		if (i - j + 1 > best) {
			best = i - j + 1;
			*from = adm[j];
			*to = adm[i];
		}
	}
	return (best);
}

static void
scenario_rate(const char *title, long L, double P, double B, double step,
    double dur, int verbose)
{
	struct tbucket b;
	double t, f = 0, to = 0;
	int i, n = 0, ok = 0, per_sec_win[100] = {0};
	char line[20000];
	size_t lp = 0;

	memset(&b, 0, sizeof b);
	nadm = 0;
	printf("== %s: is_denied(k, %ld, %gs, %gs), one request every %gs for %gs\n",
	    title, L, P, B, step, dur);
	line[0] = '\0';
	for (i = 0; ; i++) {
		t = i * step;
		if (t >= dur)
			break;
		int d = is_denied(&b, L, P, B, t);
		n++;
		if (!d) {
			ok++;
			adm[nadm++] = t;
			per_sec_win[(int)(t / 10.0)]++;
		}
		if (verbose && lp < sizeof line - 40)
			lp += snprintf(line + lp, sizeof line - lp, "%s%.1f%s",
			    lp ? " " : "", t, d ? "x" : "+");
		if (verbose > 1)
			printf("  t=%7.3f %s tokens=%ld last_used=%.3f block=%.3f\n",
			    t, d ? "DENY " : "ADMIT", b.tokens, b.last_used, b.block);
	}
	if (verbose)
		printf("  (+ admitted, x denied) %s\n", line);
	printf("  requests=%d admitted=%d denied=%d\n", n, ok, n - ok);
	printf("  admitted per 10s block [0,10),[10,20),...: ");
	for (i = 0; i * 10.0 < dur; i++)
		printf("%d ", per_sec_win[i]);
	i = max_window(P, &f, &to);
	printf("\n  max admitted in any window (t-%g, t]: %d (first %.3f .. last %.3f)\n",
	    P, i, f, to);
}

/* burst L at t=0, then one request each time one token is due (+eps) */
static void
scenario_worst(long L, double P, double eps)
{
	struct tbucket b;
	double t, last = 0, f = 0, to = 0;
	int i, ok = 0;

	memset(&b, 0, sizeof b);
	nadm = 0;
	for (i = 0; i < L; i++)
		if (!is_denied(&b, L, P, 0, 0.0)) {
			ok++;
			adm[nadm++] = 0.0;
		}
	for (i = 1; i < 3 * L; i++) {
		t = last + P / L + eps;
		if (!is_denied(&b, L, P, 0, t)) {
			ok++;
			adm[nadm++] = t;
			last = t;
		} else {
			/* retry 1ms later until admitted (keeps pace maximal) */
			while (is_denied(&b, L, P, 0, t))
				t += 0.001;
			adm[nadm++] = t;
			last = t;
		}
	}
	printf("== worst case L=%ld P=%g: burst of %ld at t=0 then one every P/L%+g s\n",
	    L, P, L, eps);
	i = max_window(P, &f, &to);
	printf("  max admitted in any window (t-%g, t]: %d (first %.6f .. last %.6f)  [2L-1 = %ld]\n",
	    P, i, f, to, 2 * L - 1);
}

/* exact boundary: is delta == P/L enough for one token in floating point? */
static void
scenario_boundary(long L, double P, double base)
{
	struct tbucket b;
	int i, d;
	double t;

	memset(&b, 0, sizeof b);
	for (i = 0; i < L; i++)
		(void)is_denied(&b, L, P, 0, base);
	t = base + P / L;
	d = is_denied(&b, L, P, 0, t);
	printf("  boundary L=%ld P=%g base=%.9f: delta=P/L=%.17g -> (delta/P)*L=%.17g -> %s\n",
	    L, P, base, t - base, ((t - base) / P) * L, d ? "DENIED" : "admitted");
}

/* random search for counterexamples to the 2L-1 bound */
static void
scenario_random(void)
{
	int trial, worst = 0, worstL = 0;
	unsigned seed = 12345;
	for (trial = 0; trial < 20000; trial++) {
		struct tbucket b;
		long L = 1 + rand_r(&seed) % 8;
		double P = 1.0 + (rand_r(&seed) % 1000) / 100.0;
		double t = 1000.0 + (rand_r(&seed) % 1000) / 7.0;
		double f, to;
		int i, m;
		memset(&b, 0, sizeof b);
		nadm = 0;
		for (i = 0; i < 400; i++) {
			t += (rand_r(&seed) % 4 == 0) ? 0.0 :
			    P / L * (rand_r(&seed) % 1200) / 1000.0;
			if (!is_denied(&b, L, P, 0, t))
				adm[nadm++] = t;
		}
		m = max_window(P, &f, &to);
		if (m - (2 * L - 1) > worst - (2 * worstL - 1) || trial == 0) {
			worst = m;
			worstL = L;
		}
		if (m > 2 * L - 1)
			printf("  COUNTEREXAMPLE L=%ld P=%g got %d\n", L, P, m);
	}
	printf("== random search (20000 schedules, L in 1..8): max(window count - (2L-1)) = %d\n",
	    worst - (2 * worstL - 1));
}

static void
scenario_remaining(int before, int calls)
{
	struct tbucket b;
	int i, k, ok = 0;
	double t;

	memset(&b, 0, sizeof b);
	for (i = 0; i < 120; i++) {
		t = i * 0.5;
		if (before)
			for (k = 0; k < calls; k++)
				(void)remaining(&b, 15, 10.0, t);
		if (!is_denied(&b, 15, 10.0, 0, t))
			ok++;
		if (!before)
			for (k = 0; k < calls; k++)
				(void)remaining(&b, 15, 10.0, t);
	}
	printf("== 2 req/s, 15/10s, VCL calls remaining() %dx %s is_denied on each request:"
	    " admitted=%d of 120\n", calls, before ? "BEFORE" : "after", ok);
}

int
main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "replay")) {
		struct tbucket b;
		long L = atol(argv[2]);
		double P = atof(argv[3]), B = atof(argv[4]), t;
		int rem = (argc == 6 && !strcmp(argv[5], "rem"));
		memset(&b, 0, sizeof b);
		while (scanf("%lf", &t) == 1) {
			if (rem)
				(void)remaining(&b, L, P, t);
			int d = is_denied(&b, L, P, B, t);
			printf("%.6f %d %s blocked_left=%.3f\n", t, d ? 429 : 200,
			    d ? "DENY" : "ADMIT", blocked_left(&b, L, P, t));
		}
		return (0);
	}
	scenario_rate("2 req/s", 15, 10.0, 0.0, 0.5, 60.0, 1);
	scenario_rate("2 req/s", 15, 10.0, 0.0, 0.5, 600.0, 0);
	scenario_rate("1.5 req/s (nominal rate)", 15, 10.0, 0.0, 1.0 / 1.5, 60.0, 0);
	scenario_rate("1.4 req/s", 15, 10.0, 0.0, 1.0 / 1.4, 60.0, 0);
	scenario_rate("1 req/s", 15, 10.0, 0.0, 1.0, 60.0, 0);
	scenario_rate("3 req/s", 15, 10.0, 0.0, 1.0 / 3, 60.0, 0);
	scenario_rate("10 req/s", 15, 10.0, 0.0, 0.1, 60.0, 0);
	scenario_rate("2 req/s, block 30s", 15, 10.0, 30.0, 0.5, 120.0, 1);
	scenario_rate("1 req/s, block 30s", 15, 10.0, 30.0, 1.0, 120.0, 1);
	scenario_worst(15, 10.0, 0.0);
	scenario_worst(15, 10.0, 0.001);
	scenario_worst(15, 10.0, 0.012);
	scenario_worst(1, 10.0, 0.0);
	scenario_worst(100, 60.0, 0.0);
	printf("== exact-boundary floating point check (request exactly P/L after the last admission):\n");
	scenario_boundary(15, 10.0, 0.0);
	scenario_boundary(15, 10.0, 12345.678901234);
	scenario_boundary(3, 1.0, 0.0);
	scenario_boundary(3, 1.0, 98765.4321);
	scenario_boundary(7, 10.0, 500000.123456789);
	scenario_random();
	scenario_remaining(0, 1);
	scenario_remaining(1, 1);
	scenario_remaining(1, 3);
	return (0);
}
