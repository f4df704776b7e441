/* test_chart_plan.c - what chart_plan decides before gnuplot draws: curve keys, colours by format rank, dashes, x positions, the y range, hidden and off-scale points, the legend past 40 curves. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/chart.h"
#include "report/chart_plan.h"
#include "results/results.h"
#include "skv.h"

/* A results table from CSV text ("t.csv", experiment "t"). */
static results table(const char *text)
{
	csv_table t;
	results r;
	message e = {NULL};
	if (csv_parse(&t, text, strlen(text), "t.csv", &e) != SKV_OK ||
	    results_from_csv(&r, &t, "t", NULL, 0, &e) != SKV_OK) {
		print_error("%s:%d: synthetic table rejected: %s\n", __FILE__, __LINE__, msg_text(&e));
		fail();
	}
	return r;
}

/* The plan of chart c on text, which must succeed. */
static void plan(chart_plan *p, results *r, const char *text, const chart_spec *c)
{
	*r = table(text);
	message e = {NULL};
	int rc = chart_plan_make(p, r, c, &e);
	if (rc != SKV_OK) {
		print_error("%s:%d: chart_plan_make: status %d (%s)\n", __FILE__, __LINE__, rc, msg_text(&e));
		fail();
	}
}

static void done(chart_plan *p, results *r)
{
	chart_plan_free(p);
	results_free(r);
}

/* Exact doubles: the range is whole decades computed by pow, compared bit
 * for bit against the same literal a reader would write. */
#define CHECK_DBL(got, want)                                                                                  \
	do {                                                                                                  \
		double g_ = (got), w_ = (want);                                                               \
		if (!(g_ == w_))                                                                              \
			fail_msg("%s:%d: %s = %a, want %a", __FILE__, __LINE__, #got, g_, w_);                   \
	} while (0)

static void check_sizes(const size_t *got, const size_t *want, size_t n, const char *what, int line)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			fail_msg("%s:%d: %s[%zu] = %zu, want %zu", __FILE__, line, what, i, got[i], want[i]);
}
#define CHECK_SIZES(got, ...)                                                                                 \
	do {                                                                                                  \
		const size_t w_[] = {__VA_ARGS__};                                                            \
		check_sizes((got), w_, sizeof w_ / sizeof *w_, #got, __LINE__);                               \
	} while (0)

static const chart_spec lines = {"generic", CHART_LINES, "splits", NULL, "norm_rel_err", "t", NULL};

/* Colour by the format column, at the format's rank in the library's table
 * whatever the order of the sweep (bf16 comes first here, yet is colour 2);
 * dash by the other column, by first appearance. */
static void colour_by_format_dash_by_parameter(void **state)
{
	(void)state;
	chart_plan p;
	results r;
	plan(&p, &r,
	     "experiment,splits,merge,partial,trial,norm_rel_err\n"
	     "t,1,onepass,bf16,0,1e-3\nt,2,onepass,bf16,0,2e-3\n"
	     "t,1,pairwise,bf16,0,1.5e-3\nt,2,pairwise,bf16,0,2.5e-3\n"
	     "t,1,onepass,fp16,0,4e-4\nt,2,onepass,fp16,0,8e-4\n"
	     "t,1,pairwise,fp16,0,5e-4\nt,2,pairwise,fp16,0,9e-4\n",
	     &lines);
	assert_int_equal(p.nskeys, 2);
	assert_string_equal(p.skeys[0], "partial"); /* the format column, though merge comes first */
	assert_string_equal(p.skeys[1], "merge");
	assert_int_equal(p.series.n, 4);
	CHECK_SIZES(p.color, SKV_BF16 + 1, SKV_BF16 + 1, SKV_FP16 + 1, SKV_FP16 + 1);
	CHECK_SIZES(p.dash, 1, 2, 1, 2);
	assert_int_equal(p.legend, 1);
	assert_int_equal(p.panel.n, 1);
	/* all x positive: the numbers themselves on a log axis */
	assert_int_equal(p.xcat, 0);
	CHECK_DBL(p.pos[0], 1);
	CHECK_DBL(p.pos[7], 2);
	/* 4e-4 .. 2.5e-3 with a factor 2 of room: 2e-4 -> 1e-4, 5e-3 -> 1e-2 */
	CHECK_DBL(p.ymin, 1e-4);
	CHECK_DBL(p.ymax, 1e-2);
	assert_int_equal(p.ylog, 1);
	assert_int_equal(p.hidden, 0);
	assert_true(p.off_lo > p.off_hi); /* no off-scale preset */
	done(&p, &r);
}

/* With no second key, a curve whose medians lie within 2% of an earlier
 * curve's at every x is dashed (fp64 partials on the fp32 floor); 3% apart
 * it is not. */
static void coinciding_curve_dashed(void **state)
{
	(void)state;
	static const char *const text[2] = {
		"experiment,splits,partial,trial,norm_rel_err\n"
		"t,1,fp32,0,1e-6\nt,2,fp32,0,1e-6\nt,1,fp64,0,1.01e-6\nt,2,fp64,0,0.99e-6\n"
		"t,1,fp16,0,1e-3\nt,2,fp16,0,2e-3\n",
		"experiment,splits,partial,trial,norm_rel_err\n"
		"t,1,fp32,0,1e-6\nt,2,fp32,0,1e-6\nt,1,fp64,0,1.01e-6\nt,2,fp64,0,1.03e-6\n"
		"t,1,fp16,0,1e-3\nt,2,fp16,0,2e-3\n",
	};
	for (int k = 0; k < 2; k++) {
		chart_plan p;
		results r;
		plan(&p, &r, text[k], &lines);
		assert_int_equal(p.nskeys, 1);
		CHECK_SIZES(p.color, SKV_FP32 + 1, SKV_FP64 + 1, SKV_FP16 + 1);
		if (k == 0)
			CHECK_SIZES(p.dash, 1, 2, 1);
		else
			CHECK_SIZES(p.dash, 1, 1, 1);
		done(&p, &r);
	}
}

/* An x with a zero (an LSE offset of 0) cannot go on a log axis: one
 * category per distinct value, in numeric order. A lone curve is sky blue
 * and has no legend; a NaN median is counted as hidden and left out of the
 * range. */
static void categories_and_hidden_points(void **state)
{
	(void)state;
	static const chart_spec offsets = {"generic", CHART_LINES, "lse_offset", NULL, "norm_rel_err", "t", NULL};
	chart_plan p;
	results r;
	plan(&p, &r,
	     "experiment,lse_offset,trial,norm_rel_err\n"
	     "t,0,0,1e-3\nt,100,0,2e-3\nt,10,0,nan\nt,10,1,nan\n",
	     &offsets);
	assert_int_equal(p.xcat, 1);
	assert_int_equal(p.ncat, 3);
	CHECK_DBL(p.catval[0], 0);
	CHECK_DBL(p.catval[1], 10);
	CHECK_DBL(p.catval[2], 100);
	CHECK_DBL(p.pos[0], 1); /* offset 0 */
	CHECK_DBL(p.pos[1], 3); /* offset 100 */
	CHECK_DBL(p.pos[2], 2); /* offset 10 */
	assert_int_equal(p.series.n, 1);
	CHECK_SIZES(p.color, CHART_COLOR_LONE);
	CHECK_SIZES(p.dash, 1);
	assert_int_equal(p.legend, 0);
	assert_int_equal(p.hidden, 1);
	CHECK_DBL(p.ymin, 1e-4); /* 5e-4 */
	CHECK_DBL(p.ymax, 1e-2); /* 4e-3 */
	done(&p, &r);
}

/* The off-scale preset is left out of the y range, and where its medians
 * lie is kept for the chart's note. */
static void offscale_preset(void **state)
{
	(void)state;
	static const chart_spec sys = {"generic", CHART_LINES, "splits", NULL, "norm_rel_err", "t", "exact-fp64"};
	static const char text[] = "experiment,preset,splits,trial,norm_rel_err\n"
				   "t,exact-fp64,1,0,1e-16\nt,exact-fp64,2,0,3e-16\n"
				   "t,fa2,1,0,1e-4\nt,fa2,2,0,3e-4\n";
	chart_plan p;
	results r;
	plan(&p, &r, text, &sys);
	assert_true(chart_offscale(&p, 0) && chart_offscale(&p, 1) && !chart_offscale(&p, 2));
	CHECK_DBL(p.ymin, 1e-5); /* 5e-5, not 5e-17 */
	CHECK_DBL(p.ymax, 1e-3); /* 6e-4 */
	CHECK_DBL(p.off_lo, 1e-16);
	CHECK_DBL(p.off_hi, 3e-16);
	/* no format column: colour by the first key, by first appearance */
	CHECK_SIZES(p.color, 1, 2);
	done(&p, &r);
	/* without an off-scale preset the range takes it in */
	plan(&p, &r, text, &lines);
	CHECK_DBL(p.ymin, 1e-17);
	assert_true(p.off_lo > p.off_hi);
	done(&p, &r);
}

/* The text of n curves (knob 0..n-1) of two points each. */
static char *many_curves(size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	fputs("experiment,knob,splits,trial,norm_rel_err\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "t,k%zu,1,0,1e-3\nt,k%zu,2,0,2e-3\n", i, i);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Up to 40 curves are named in a legend; past it none are, and the chart
 * data says how many curves there are instead. */
static void legend_dropped_past_40(void **state)
{
	(void)state;
	for (size_t n = CHART_LEGEND_MAX; n <= CHART_LEGEND_MAX + 1; n++) {
		char *text = many_curves(n);
		chart_plan p;
		results r;
		plan(&p, &r, text, &lines);
		assert_int_equal(p.series.n, n);
		assert_int_equal(p.legend, n <= 40);
		assert_int_equal(p.color[n - 1], n); /* k0 .. k(n-1) by first appearance */
		chart_plan_free(&p);
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);
		assert_int_equal(chart_write_data(f, &r, &lines, NULL), SKV_OK);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(strstr(out, "41 curves, too many to name in a legend") != NULL, n == 41);
		assert_int_equal(strstr(out, "'knob k0'") != NULL, n == 40);
		free(out);
		free(text);
		results_free(&r);
	}
}

/* Boxes go on a log axis only when their values span more than two
 * decades; the categories are the values of x in sweep order. */
static void boxes_log_past_two_decades(void **state)
{
	(void)state;
	static const chart_spec boxes = {"generic", CHART_BOXES, "order", NULL, "norm_rel_err", "t", NULL};
	static const char *const text[2] = {
		"experiment,order,trial,norm_rel_err\nt,tree,0,1e-3\nt,seq,0,5e-2\n",
		"experiment,order,trial,norm_rel_err\nt,tree,0,1e-3\nt,seq,0,2e-1\n",
	};
	for (int k = 0; k < 2; k++) {
		chart_plan p;
		results r;
		plan(&p, &r, text[k], &boxes);
		assert_int_equal(p.ylog, k);
		assert_int_equal(p.xcat, 1);
		assert_int_equal(p.ncat, 2);
		CHECK_DBL(p.pos[0], 1);
		CHECK_DBL(p.pos[1], 2);
		done(&p, &r);
	}
}

/* A swept value that is not a finite number is refused naming its line. */
static void bad_x_refused(void **state)
{
	(void)state;
	results r = table("experiment,splits,trial,norm_rel_err\nt,1,0,1e-3\nt,inf,0,1e-3\n");
	chart_plan p;
	message e = {NULL};
	assert_int_equal(chart_plan_make(&p, &r, &lines, &e), SKV_EINVAL);
	assert_string_equal(msg_text(&e), "t.csv:3: column 'splits' is not finite");
	msg_free(&e);
	results_free(&r);
}

/* The chart data of chart c for text, as a string. */
static char *data_of(const char *text, const chart_spec *c)
{
	results r = table(text);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	message e = {NULL};
	if (chart_write_data(f, &r, c, &e) != SKV_OK)
		fail_msg("%s:%d: chart_write_data: %s", __FILE__, __LINE__, msg_text(&e));
	assert_int_equal(fclose(f), 0);
	results_free(&r);
	return out;
}

static void has(const char *hay, const char *needle, int line)
{
	if (!strstr(hay, needle))
		fail_msg("%s:%d: \"%s\" not in:\n%s", __FILE__, line, needle, hay);
}
#define HAS(hay, needle) has((hay), (needle), __LINE__)

/* The floor lines: one per output format of the drawn points and panel, at
 * the median of their floor_err medians; the off-scale preset's floor
 * left out of them and of the range, which takes the floors in. */
static void floors_per_output_format(void **state)
{
	(void)state;
	static const chart_spec sys = {"generic", CHART_LINES, "splits", "lse_offset", "norm_rel_err", "t", "ref"};
	static const char text[] =
		"experiment,preset,output,lse_offset,splits,trial,norm_rel_err,floor_err\n"
		"t,a,bf16,0,1,0,3e-3,1e-3\nt,a,bf16,0,2,0,3e-3,3e-3\nt,a,bf16,0,4,0,3e-3,2e-3\n"
		"t,b,fp16,0,1,0,5e-3,2e-5\nt,b,fp16,0,2,0,5e-3,2e-5\nt,b,fp16,0,4,0,5e-3,2e-5\n"
		"t,c,bf16,50,1,0,3e-3,4e-3\n"
		"t,ref,fp64,0,1,0,1e-16,1e-17\nt,ref,fp64,50,1,0,1e-16,1e-17\n";
	chart_plan p;
	results r;
	plan(&p, &r, text, &sys);
	assert_int_equal(p.floor_ulp, 0);
	assert_int_equal(p.nfloor, 2); /* bf16, fp16; not the off-scale fp64 */
	assert_string_equal(p.floor_fmt[0], "bf16");
	assert_string_equal(p.floor_fmt[1], "fp16");
	assert_int_equal(p.panel.n, 2);
	CHECK_DBL(p.floor[0], 2e-3); /* offset 0, bf16: median of 1e-3, 3e-3, 2e-3 */
	CHECK_DBL(p.floor[1], 2e-5); /* offset 0, fp16 */
	CHECK_DBL(p.floor[2], 4e-3); /* offset 50, bf16: c alone */
	assert_true(isnan(p.floor[3])); /* offset 50 has no fp16 */
	CHECK_DBL(p.ymin, 1e-5);      /* the fp16 floor 2e-5 / 2 */
	CHECK_DBL(p.ymax, 1e-2);
	done(&p, &r);
	char *d = data_of(text, &sys);
	HAS(d, "nfloor = 2\nfloor_ulp = 0\narray floor_fmt[2] = ['bf16', 'fp16']\n");
	HAS(d, "array floor_y[4] = [0.002, 2.0000000000000002e-05, 0.0040000000000000001, NaN]\n");
	free(d);
	/* a ulp metric: the 1/2 bound, once per panel; no floor_err column: none */
	static const chart_spec ulps = {"generic", CHART_BOXES, "order", NULL, "norm_ulp_err", "t", NULL};
	plan(&p, &r, "experiment,order,output,trial,norm_rel_err,norm_ulp_err\nt,seq,fp32,0,1e-7,3\nt,rev,fp32,0,1e-7,900\n",
	     &ulps);
	assert_int_equal(p.floor_ulp, 1);
	assert_int_equal(p.nfloor, 1);
	CHECK_DBL(p.floor[0], 0.5);
	CHECK_DBL(p.ymin, 0.1); /* 0.5 / 2 -> 0.1: the bound is on the axis */
	done(&p, &r);
	plan(&p, &r, "experiment,splits,trial,norm_rel_err\nt,1,0,1e-3\nt,2,0,2e-3\n", &lines);
	assert_int_equal(p.nfloor, 0);
	done(&p, &r);
}

/* A curve on an earlier one is named in the chart's note, with two keys as
 * with one (then it is also dashed). */
static void curves_under_others_noted(void **state)
{
	(void)state;
	static const char text[] = "experiment,splits,partial,merge,trial,norm_rel_err\n"
				   "t,1,fp32,onepass,0,1e-6\nt,2,fp32,onepass,0,2e-6\n"
				   "t,1,fp64,onepass,0,1.01e-6\nt,2,fp64,onepass,0,2e-6\n"
				   "t,1,fp32,pairwise,0,1e-6\nt,2,fp32,pairwise,0,2.02e-6\n"
				   "t,1,fp16,pairwise,0,1e-3\nt,2,fp16,pairwise,0,2e-3\n";
	chart_plan p;
	results r;
	plan(&p, &r, text, &lines);
	assert_int_equal(p.series.n, 4);
	CHECK_SIZES(p.under, SIZE_MAX, 0, 0, SIZE_MAX);
	CHECK_SIZES(p.dash, 1, 1, 2, 2); /* the second key (merge) claims the dash */
	done(&p, &r);
	char *d = data_of(text, &lines);
	HAS(d, "note = 'partial fp64, onepass and partial fp32, pairwise lie on partial fp32, onepass (within 2%)'");
	free(d);
	/* one curve under another: "lies" */
	d = data_of("experiment,splits,partial,trial,norm_rel_err\nt,1,fp32,0,1e-6\nt,1,fp64,0,1e-6\n", &lines);
	HAS(d, "note = 'partial fp64 lies on partial fp32 (within 2%)'");
	free(d);
}

/* A heatmap: one column per x value whatever they are, the curves as its
 * rows (named on the axis, no legend), the colour range from the medians
 * alone, and the grid of log10 medians per panel with NaN where a median
 * is not positive. */
static void heatmap_grid(void **state)
{
	(void)state;
	static const chart_spec heat = {"heatmap", CHART_HEATMAP, "splits", "lse", "norm_rel_err", "t", NULL};
	static const char text[] = "experiment,splits,lse_offset,lse,trial,norm_rel_err\n"
				   "t,2,1000,fp16,0,1e-2\nt,2,1000,fp16,1,1e-1\nt,4,1000,fp16,0,1e-1\n"
				   "t,2,1000.5,fp16,0,1\nt,4,1000.5,fp16,0,0\n"
				   "t,2,1000,bf16,0,1e-3\nt,4,1000,bf16,0,1e-3\nt,2,1000.5,bf16,0,1e-3\nt,4,1000.5,bf16,0,1e-3\n";
	chart_plan p;
	results r;
	plan(&p, &r, text, &heat);
	assert_int_equal(p.xcat, 1); /* all positive, yet categories */
	assert_int_equal(p.ncat, 2);
	assert_int_equal(p.series.n, 2); /* the offsets */
	assert_int_equal(p.panel.n, 2);  /* the formats */
	assert_int_equal(p.legend, 0);
	assert_int_equal(p.nfloor, 0);
	/* medians 1e-3 .. 1 (trials 1e-2 and 1e-1 give 0.055): 5e-4 -> 1e-4, 2 -> 10 */
	CHECK_DBL(p.ymin, 1e-4);
	CHECK_DBL(p.ymax, 10);
	done(&p, &r);
	char *d = data_of(text, &heat);
	HAS(d, "array rowlab[2] = ['1000', '1000.5']\n");
	HAS(d, "$grid << EOD\n# panel 1\n1 1 -1.25964\n2 1 -1\n\n1 2 0\n2 2 NaN\n\n\n# panel 2\n1 1 -3\n");
	assert_null(strstr(d, "too many to name"));
	free(d);
}

/* The fixed-parameter line leaves out what another parameter makes inert
 * (a KV cache's scales without a cache, lane-keys with one sum) and keeps
 * them where the cache is there or varies. */
static void inert_parameters_left_out(void **state)
{
	(void)state;
	char *d = data_of("experiment,splits,kv_cache,kv_scale,kv_deq,lanes,lane_keys,trial,norm_rel_err\n"
			  "t,1,none,none,values,0,0,0,1e-3\nt,2,none,none,values,0,0,0,2e-3\n",
			  &lines);
	HAS(d, "fixed = 'kv-cache none, lanes 0, 1 trial per point'");
	free(d);
	d = data_of("experiment,splits,kv_cache,kv_scale,kv_deq,lanes,lane_keys,trial,norm_rel_err\n"
		    "t,1,e4m3,tensor,values,4,2,0,1e-3\nt,2,e4m3,tensor,values,4,2,0,2e-3\n",
		    &lines);
	HAS(d, "fixed = 'kv-cache e4m3, kv-scale tensor, kv-deq values, lanes 4, lane-keys 2, 1 trial per point'");
	free(d);
	d = data_of("experiment,splits,kv_cache,kv_scale,trial,norm_rel_err\n"
		    "t,1,none,none,0,1e-3\nt,1,e4m3,none,0,2e-3\n",
		    &lines);
	HAS(d, "fixed = 'splits 1, kv-scale none, 1 trial per point'");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(colour_by_format_dash_by_parameter),
		cmocka_unit_test(coinciding_curve_dashed),
		cmocka_unit_test(categories_and_hidden_points),
		cmocka_unit_test(offscale_preset),
		cmocka_unit_test(legend_dropped_past_40),
		cmocka_unit_test(boxes_log_past_two_decades),
		cmocka_unit_test(bad_x_refused),
		cmocka_unit_test(floors_per_output_format),
		cmocka_unit_test(curves_under_others_noted),
		cmocka_unit_test(heatmap_grid),
		cmocka_unit_test(inert_parameters_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
