/* report.c - the `skv report DIR` command: charts and REPORT.md from the CSV files of a run. */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/io.h"
#include "report/chart.h"
#include "report/gnuplot.h"
#include "report/report_internal.h"
#include "skv.h"

/* The chart data of s: derived from the CSV alone, it goes into place at
 * once (DIR/.plot/EXPERIMENT.gp), where the chart script finds it. */
static int chart_data(job *j, const section *s, const char *plotdir)
{
	message e = {NULL};
	char *data = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&data, &len);
	if (!f)
		return SKV_ENOMEM;
	int rc = chart_write_data(f, &s->r, s->chart, &e);
	if (fclose(f) != 0 && !rc)
		rc = SKV_ENOMEM;
	char *dat = report_path(plotdir, s->name, ".gp");
	size_t mark = j->np;
	if (!rc && !dat)
		rc = SKV_ENOMEM;
	if (!rc)
		rc = report_pending_write(j, dat, data, len);
	if (!rc)
		rc = report_pending_commit(j, mark, 1);
	else if (*msg_text(&e))
		fprintf(j->msg, "skv report: %s\n", msg_text(&e));
	msg_free(&e);
	free(data);
	free(dat);
	return rc;
}

/* The PNG and SVG of s, drawn by its chart script under temporary names.
 * gnuplot's own messages go to a log beside the chart data, said in one
 * line: never onto the terminal unasked. */
static int chart_images(job *j, const section *s, const char *plotdir)
{
	char script[4096 + 64];
	snprintf(script, sizeof script, "%s%s.gp", j->scripts, s->chart->script);
	static const char *const terms[] = {"png", "svg"};
	char *warned = NULL;
	int rc = SKV_OK;
	for (size_t t = 0; t < sizeof terms / sizeof *terms && !rc; t++) {
		char ext[8], *out, *tmp, *shown, *w = NULL;
		message e = {NULL};
		snprintf(ext, sizeof ext, ".%s", terms[t]);
		out = report_path(j->dir, s->name, ext);
		shown = report_path(j->name, s->name, ext);
		rc = out && shown ? report_pending_new(j, out, &tmp) : SKV_ENOMEM;
		if (!rc && (rc = gnuplot_run(j->gnuplot, script, s->csv, tmp, terms[t], shown, &w, &e)))
			fprintf(j->msg, "skv report: %s\n", msg_text(&e));
		msg_free(&e);
		if (w && !warned)
			warned = w;
		else
			free(w);
		free(out);
		free(shown);
	}
	char *log = warned ? report_path(plotdir, s->name, ".log") : NULL;
	if (!rc && warned && log && (rc = report_pending_write(j, log, warned, strlen(warned))) == SKV_OK)
		fprintf(j->msg, "skv report: note: gnuplot warned while drawing %s; its messages are in %s/.plot/%s.log\n",
			s->name, j->name, s->name);
	free(log);
	free(warned);
	return rc;
}

/* Every chart: its data, then its images. */
static int draw_all(job *j)
{
	char *plotdir = report_path(j->dir, ".plot", "");
	if (!plotdir)
		return SKV_ENOMEM;
	int made = mkdir(plotdir, 0777) == 0;
	if (made)
		stage_track(plotdir, 1);
	if (!made && errno != EEXIST) {
		fprintf(j->msg, "skv report: cannot create %s: %s\n", plotdir, strerror(errno));
		free(plotdir);
		return SKV_EIO;
	}
	int rc = SKV_OK;
	for (size_t i = 0; i < j->n && !rc; i++) {
		rc = chart_data(j, &j->s[i], plotdir);
		if (!rc)
			rc = chart_images(j, &j->s[i], plotdir);
	}
	free(plotdir);
	return rc;
}

static void job_free(job *j)
{
	report_pending_commit(j, 0, 0);
	free(j->p);
	for (size_t i = 0; i < j->n; i++) {
		results_free(&j->s[i].r);
		free(j->s[i].name);
		free(j->s[i].csv);
		free(j->s[i].md);
		free(j->s[i].meta);
		free(j->s[i].findings);
	}
	free(j->s);
}

/* "reports/default/" is named "reports/default" in messages and links. */
static char *strip_slashes(const char *dir)
{
	char *d = strdup(dir);
	for (size_t k = d ? strlen(d) : 0; k > 1 && d[k - 1] == '/'; k--)
		d[k - 1] = '\0';
	return d;
}

int report_run(const char *dir, FILE *msg) { return report_run_as(dir, NULL, msg); }

int report_run_as(const char *dir, const char *shown, FILE *msg)
{
	if (!msg)
		msg = stderr;
	if (!dir || !*dir) {
		fprintf(msg, "skv report: no folder given (usage: skv report DIR)\n");
		return SKV_EINVAL;
	}
	char *d = strip_slashes(dir), *nm = strip_slashes(shown ? shown : dir);
	if (!d || !nm) {
		free(d), free(nm);
		fprintf(msg, "skv report: out of memory\n");
		return SKV_ENOMEM;
	}
	job j = {.dir = d, .name = nm, .msg = msg};
	int rc = report_list_csv(&j);
	if (!rc)
		rc = report_read_all(&j);
	if (!rc && gnuplot_find(j.gnuplot, sizeof j.gnuplot) != SKV_OK) {
		fprintf(msg, "skv report: gnuplot not found on PATH; the charts need it. Install it with: %s\n",
			GNUPLOT_INSTALL);
		rc = SKV_EIO;
	}
	if (!rc && gnuplot_scripts(j.scripts, sizeof j.scripts) != SKV_OK) {
		fprintf(msg, "skv report: the chart scripts (scripts/common.gp) were not found next to the skv executable "
			     "nor in ./scripts; set SKV_SCRIPTS to their folder\n");
		rc = SKV_EIO;
	}
	if (!rc)
		rc = draw_all(&j);
	if (!rc)
		rc = report_write_page(&j);
	if (!rc)
		rc = report_pending_commit(&j, 0, 1);
	if (rc == SKV_ENOMEM)
		fprintf(msg, "skv report: out of memory\n");
	if (!rc)
		fprintf(msg, "skv report: %zu experiment%s, %zu chart%s (PNG and SVG) -> %s%sREPORT.md\n", j.n,
			j.n == 1 ? "" : "s", j.n, j.n == 1 ? "" : "s", nm, strcmp(nm, "/") == 0 ? "" : "/");
	job_free(&j);
	free(d);
	free(nm);
	return rc;
}

