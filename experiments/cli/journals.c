/* journals.c - a run's journals: one per output folder (a shard's, its shard folder), started or resumed, the units they hold gathered, removed at the end or published as the shard's file. */
#define _GNU_SOURCE /* asprintf, realpath */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/shard.h"

static const char *spec_dir(const run_spec *s) { return s->shown_out ? s->shown_out : s->out; }

/* One journal per output folder (by its real path), or the one of a
 * shard's folder for every spec. */
static int map_folders(journal_set *s, const run_spec *specs, const shard_mode *m)
{
	s->spec_fj = calloc(s->nspecs ? s->nspecs : 1, sizeof *s->spec_fj);
	s->fj = calloc(s->nspecs ? s->nspecs : 1, sizeof *s->fj);
	if (!s->spec_fj || !s->fj)
		return SKV_ENOMEM;
	for (size_t k = 0; k < s->nspecs; k++) {
		const char *d = m->n ? m->shard_dir : spec_dir(&specs[k]);
		char *key = realpath(d, NULL);
		if (!key && !(key = strdup(d)))
			return SKV_ENOMEM;
		size_t f = 0;
		while (f < s->nfj && strcmp(s->fj[f].key, key) != 0)
			f++;
		if (f == s->nfj) {
			s->fj[f].key = key;
			s->fj[f].j.fd = -1;
			if (!(s->fj[f].dir = strdup(d)) || asprintf(&s->fj[f].path, "%s/%s", d, SHARD_JOURNAL) < 0)
				return SKV_ENOMEM;
			s->nfj++;
		} else
			free(key);
		s->spec_fj[k] = f;
	}
	return SKV_OK;
}

int jset_start(journal_set *s, const run_spec *specs, size_t n, const suite_units *u, const shard_mode *m,
	       const unsigned *shard, unsigned char *done, message *e)
{
	memset(s, 0, sizeof *s);
	s->nspecs = n;
	if (map_folders(s, specs, m) != SKV_OK) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	/* A record of a spec that writes elsewhere, or of a unit not this
	 * shard's, is not this run's. */
	for (size_t f = 0; f < s->nfj; f++) {
		folder_journal *J = &s->fj[f];
		int st = shard_journal_start(&J->j, &J->old, J->path, u, m, e);
		for (size_t r = 1; st == SKV_OK && r < J->old.nrec; r++) {
			uint64_t line, unit;
			if (J->old.rec[r].type != JOURNAL_UNIT ||
			    unit_record_line(&line, &unit, J->old.rec[r].data, J->old.rec[r].len) != SKV_OK || line >= n ||
			    s->spec_fj[line] != f || unit >= u->unit0[line + 1] - u->unit0[line] ||
			    (shard && shard[u->unit0[line] + unit] != m->k - 1)) {
				msg_set(e, "skv: the journal '%s' is not this run's: record %zu names no unit of this %s", J->path, r,
					m->n ? "shard" : "run");
				st = SKV_EINVAL;
			} else
				done[u->unit0[line] + unit] = 1;
		}
		if (st != SKV_OK)
			return st;
	}
	return SKV_OK;
}

journal *jset_journal(journal_set *s, size_t k) { return &s->fj[s->spec_fj[k]].j; }

const char *jset_path(const journal_set *s, size_t k) { return s->fj[s->spec_fj[k]].path; }

int jset_gather(const journal_set *s, size_t k, unit_set *c, const unit_plan *p, message *e)
{
	const folder_journal *J = &s->fj[s->spec_fj[k]];
	for (size_t r = 1; r < J->old.nrec; r++) {
		uint64_t line, unit;
		unit_record_line(&line, &unit, J->old.rec[r].data, J->old.rec[r].len); /* checked by jset_start */
		if (line != k)
			continue;
		message why = {NULL};
		if (unit_record_add(c, p, J->old.rec[r].data, J->old.rec[r].len, &why) != SKV_OK) {
			msg_set(e, "skv: the journal '%s' is not this run's: record %zu: %s", J->path, r, msg_text(&why));
			msg_free(&why);
			return SKV_EINVAL;
		}
	}
	return SKV_OK;
}

int jset_finish(journal_set *s, const shard_mode *m, char **published, message *e)
{
	int st = SKV_OK;
	*published = NULL;
	for (size_t f = 0; f < s->nfj && st == SKV_OK; f++)
		st = journal_close(&s->fj[f].j, e);
	if (st != SKV_OK || !m->n) {
		for (size_t f = 0; f < s->nfj && st == SKV_OK; f++)
			unlink(s->fj[f].path);
		return st;
	}
	if (shard_file_name(published, s->fj[0].dir, m->k, m->n) != SKV_OK) {
		msg_set(e, "skv: out of memory");
		return SKV_ENOMEM;
	}
	st = outdir_publish(&s->fj[0].path, published, 1, e);
	if (st != SKV_OK) {
		free(*published);
		*published = NULL;
	}
	return st;
}

void jset_free(journal_set *s)
{
	message e = {NULL};
	for (size_t f = 0; s->fj && f < s->nfj; f++) {
		journal_close(&s->fj[f].j, &e);
		journal_file_free(&s->fj[f].old);
		free(s->fj[f].dir), free(s->fj[f].key), free(s->fj[f].path);
	}
	msg_free(&e);
	free(s->fj);
	free(s->spec_fj);
	memset(s, 0, sizeof *s);
}
