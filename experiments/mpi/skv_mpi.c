/* skv_mpi.c - skv-mpi: a suite's work units across MPI ranks (dynamic, largest first, OpenMP inside each rank), the rows gathered on rank 0, journalled, and written as build/skv suite writes them. */
#define _GNU_SOURCE /* strndup */
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/shard.h"
#include "mpi/mpi_run.h"

/* Most units in a batch (a worker's threads beyond it share less). */
#define BATCH_MAX 4096

typedef struct rec_node {
	struct rec_node *next;
	unsigned char *rec;
	size_t len;
} rec_node;

typedef struct {
	int rank, nranks, threads;
	run_spec *specs;
	size_t nspecs;
	suite_units u;
	shard_mode m;
	char *command;
	/* rank 0 */
	journal_set js;
	unit_set *sets; /* [nspecs] */
	unsigned char *done;
	mpi_sched sched;
	mpi_worker local; /* rank 0's own computation, on its thread */
	pthread_mutex_t mu; /* the local thread's records and end */
	rec_node *head, *tail;
	int local_end, local_st;
	message local_err;
	size_t todo, got;
	double work_todo, work_got, t0, last, cpu0;
	int step;
} mpi_state;

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------- signals */

/* What rank 0 says when the job is stopped under it (mpirun ends every
 * rank with SIGTERM when one dies): the journal keeps what finished. The
 * temporaries' handler (tempfile.c) runs after, and the signal kills. */
static char stop_note[4400];
static size_t stop_len;
static struct sigaction old_term;

static void on_term(int sig)
{
	if (stop_len && write(2, stop_note, stop_len) < 0)
		stop_len = 0;
	sigaction(sig, &old_term, NULL);
	raise(sig);
}

static void note_on_term(const char *jpath, int more)
{
	stop_len = (size_t)snprintf(stop_note, sizeof stop_note,
				    "skv-mpi: stopped by a signal (a rank failed, or the job was cancelled); no final file "
				    "was written; the finished units are kept in '%s'%s: rerun with --resume\n",
				    jpath, more ? " and the other lines' folders" : "");
	stop_len = stop_len < sizeof stop_note ? stop_len : 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, &old_term);
}

/* ------------------------------------------------------------- progress */

static void progress(mpi_state *S, int final)
{
	const double t = progress_now(), el = t - S->t0, frac = S->work_todo > 0 ? S->work_got / S->work_todo : 1.0;
	const double eta = frac > 0 ? el * (1 - frac) / frac : 0;
	if (isatty(2) && (final || t - S->last >= 0.25)) {
		S->last = t;
		fprintf(stderr, "\rskv-mpi: %zu/%zu units done, %3.0f%% of the work, %.1f s elapsed", S->got, S->todo,
			100 * frac, el);
		fprintf(stderr, final ? "          \n" : ", ETA %.1f s  ", eta);
	} else if (!isatty(2) && (int)(10 * frac) > S->step) {
		S->step = (int)(10 * frac);
		fprintf(stderr, "skv-mpi: %zu/%zu units done, %.0f%% of the work, %.1f s elapsed, ETA %.1f s\n", S->got,
			S->todo, 100 * frac, el, eta);
	}
}

/* ------------------------------------------------------------- rank 0 */

/* A unit's record, from a rank or from rank 0's thread: checked, added to
 * its spec's rows, appended to the journal. */
static int absorb(mpi_state *S, const unsigned char *rec, size_t len, int from, message *e)
{
	uint64_t line, unit;
	const unsigned char *pl = rec + JOURNAL_FRAME_HEAD;
	const size_t pn = len - JOURNAL_FRAME_HEAD - JOURNAL_FRAME_TAIL;
	if (journal_check(rec, len) != SKV_OK || unit_record_line(&line, &unit, pl, pn) != SKV_OK || line >= S->nspecs) {
		msg_set(e, "skv-mpi: rank %d sent a damaged record (%zu bytes)", from, len);
		return SKV_EIO;
	}
	message why = {NULL};
	int st = unit_record_add(&S->sets[line], S->local.plans[line], pl, pn, &why);
	if (st != SKV_OK)
		msg_set(e, "skv-mpi: rank %d sent a record this run cannot take: %s", from, msg_text(&why));
	msg_free(&why);
	if (st == SKV_OK)
		st = journal_append(jset_journal(&S->js, line), rec, len, e);
	if (st == SKV_OK) {
		S->got++;
		S->work_got += S->u.work[S->u.unit0[line] + unit];
		progress(S, 0);
	}
	return st;
}

static int local_sink(void *ctx, unsigned char *rec, size_t len, message *e)
{
	mpi_state *S = ctx;
	rec_node *n = malloc(sizeof *n);
	if (!n) {
		free(rec);
		msg_set(e, "skv-mpi: out of memory");
		return SKV_ENOMEM;
	}
	*n = (rec_node){NULL, rec, len};
	pthread_mutex_lock(&S->mu);
	*(S->tail ? &S->tail->next : &S->head) = n;
	S->tail = n;
	pthread_mutex_unlock(&S->mu);
	return SKV_OK;
}

/* Rank 0's own share: batches from the same schedule, computed on this
 * thread (which never calls MPI) with OpenMP inside. */
static void *local_main(void *arg)
{
	mpi_state *S = arg;
	size_t batch[BATCH_MAX], n;
	message e = {NULL};
	int st = SKV_OK;
	while (st == SKV_OK && (n = sched_next(&S->sched, batch, (size_t)S->threads)) > 0)
		st = worker_batch(&S->local, batch, n, &e);
	pthread_mutex_lock(&S->mu);
	S->local_end = 1, S->local_st = st, S->local_err = e;
	pthread_mutex_unlock(&S->mu);
	return NULL;
}

/* The local thread's records so far; its failure, once it ended. */
static int drain_local(mpi_state *S, int *did, message *e)
{
	pthread_mutex_lock(&S->mu);
	rec_node *n = S->head;
	S->head = S->tail = NULL;
	const int end = S->local_end, st = S->local_st;
	pthread_mutex_unlock(&S->mu);
	int rc = SKV_OK;
	for (rec_node *next; n; n = next) {
		next = n->next;
		if (rc == SKV_OK)
			rc = absorb(S, n->rec, n->len, 0, e);
		*did = 1;
		free(n->rec);
		free(n);
	}
	if (rc == SKV_OK && end && st != SKV_OK) {
		msg_set(e, "%s", msg_text(&S->local_err));
		rc = st;
	}
	return rc;
}

/* One message from a worker: a request, a record or a failure. */
static int serve(mpi_state *S, const MPI_Status *ms, int *stopped, message *e)
{
	int cnt = 0;
	MPI_Get_count(ms, MPI_BYTE, &cnt);
	unsigned char *buf = malloc((size_t)cnt + 1);
	if (!buf) {
		msg_set(e, "skv-mpi: out of memory");
		return SKV_ENOMEM;
	}
	MPI_Recv(buf, cnt, MPI_BYTE, ms->MPI_SOURCE, ms->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	int st = SKV_OK;
	if (ms->MPI_TAG == TAG_REQ) {
		uint64_t t = cnt == 8 ? journal_get64(buf) : 1, out[BATCH_MAX];
		size_t g[BATCH_MAX], n = sched_next(&S->sched, g, t < 1 ? 1 : t > BATCH_MAX ? BATCH_MAX : (size_t)t);
		for (size_t i = 0; i < n; i++)
			out[i] = g[i];
		MPI_Send(out, (int)n, MPI_UINT64_T, ms->MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
		*stopped += n == 0;
	} else if (ms->MPI_TAG == TAG_REC) {
		st = absorb(S, buf, (size_t)cnt, ms->MPI_SOURCE, e);
	} else {
		buf[cnt] = '\0';
		msg_set(e, "skv-mpi: rank %d failed: %s", ms->MPI_SOURCE, cnt > 1 ? (char *)buf + 1 : "");
		st = cnt > 0 ? buf[0] : SKV_EIO;
	}
	free(buf);
	return st;
}

/* Rank 0's main thread: serves the workers and gathers every record until
 * every unit is in and every worker has been told to stop. */
static int coordinate(mpi_state *S, message *e)
{
	pthread_t th;
	if (pthread_create(&th, NULL, local_main, S) != 0) {
		msg_set(e, "skv-mpi: cannot start rank 0's computing thread");
		return SKV_EIO;
	}
	/* Idle, the thread sleeps longer and longer (50 us to 2 ms): probing
	 * without pause would take a core from the ranks' computation (Open
	 * MPI's probe polls), and messages come only as units finish. */
	int st = SKV_OK, stopped = 0;
	long nap = 50;
	while (st == SKV_OK && (S->got < S->todo || stopped < S->nranks - 1)) {
		int did = 0, flag = 0;
		st = drain_local(S, &did, e);
		MPI_Status ms;
		if (st == SKV_OK)
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
		if (flag)
			st = serve(S, &ms, &stopped, e);
		nap = did || flag ? 50 : nap < 2000 ? 2 * nap : 2000;
		if (!did && !flag)
			sleep_us(nap);
	}
	if (st != SKV_OK)
		return st; /* the caller aborts the job: the thread dies with it */
	pthread_join(th, NULL);
	if (S->todo)
		progress(S, 1);
	return SKV_OK;
}

/* ------------------------------------------------------------- workers */

static int remote_sink(void *ctx, unsigned char *rec, size_t len, message *e)
{
	(void)ctx, (void)e;
	MPI_Send(rec, (int)len, MPI_BYTE, 0, TAG_REC, MPI_COMM_WORLD);
	free(rec);
	return SKV_OK;
}

/* A rank other than 0: asks for batches until told to stop. A failure is
 * sent to rank 0, which ends the job. */
static int work(mpi_state *S, mpi_worker *w, message *e)
{
	uint64_t req, buf[BATCH_MAX];
	size_t g[BATCH_MAX];
	journal_put64((unsigned char *)&req, (uint64_t)S->threads);
	for (;;) {
		MPI_Status ms;
		int n = 0;
		MPI_Send(&req, 8, MPI_BYTE, 0, TAG_REQ, MPI_COMM_WORLD);
		MPI_Recv(buf, BATCH_MAX, MPI_UINT64_T, 0, TAG_WORK, MPI_COMM_WORLD, &ms);
		MPI_Get_count(&ms, MPI_UINT64_T, &n);
		if (n <= 0)
			return SKV_OK;
		for (int i = 0; i < n; i++)
			g[i] = (size_t)buf[i];
		int st = worker_batch(w, g, (size_t)n, e);
		if (st != SKV_OK) {
			size_t len = strlen(msg_text(e));
			char *m = malloc(len + 2);
			if (m) {
				m[0] = (char)st;
				memcpy(m + 1, msg_text(e), len + 1);
				MPI_Send(m, (int)len + 2, MPI_BYTE, 0, TAG_FAIL, MPI_COMM_WORLD);
			}
			free(m);
			for (;;) /* rank 0 aborts the job */
				sleep_us(100000);
		}
	}
}

/* Waits for every rank without spinning a core (a blocking barrier polls). */
static void quiet_barrier(void)
{
	MPI_Request r;
	int done = 0;
	MPI_Ibarrier(MPI_COMM_WORLD, &r);
	while (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
		sleep_us(1000);
}

/* ------------------------------------------------------------- the run */

/* Rank 0's setup: every line's folder prepared and locked; their journals
 * started (or resumed: the units they hold marked done and gathered);
 * the rows' sets; every plan open; the schedule. */
static int setup0(mpi_state *S, message *e)
{
	int st = SKV_OK;
	for (size_t k = 0; k < S->nspecs && st == SKV_OK; k++)
		if ((st = outdir_prepare(S->specs[k].out, e)) == SKV_OK)
			st = outdir_lock(S->specs[k].out, S->command, e);
	S->sets = st == SKV_OK ? calloc(S->nspecs, sizeof *S->sets) : NULL;
	S->done = S->sets ? calloc(S->u.nunits + 1, 1) : NULL;
	if (st == SKV_OK && !S->done)
		st = SKV_ENOMEM;
	if (st == SKV_OK)
		st = jset_start(&S->js, S->specs, S->nspecs, &S->u, &S->m, NULL, S->done, e);
	if (st == SKV_OK)
		st = worker_init(&S->local, S->specs, &S->u, local_sink, S, e);
	for (size_t k = 0; k < S->nspecs && st == SKV_OK; k++)
		if ((st = worker_plan(&S->local, k, e)) == SKV_OK && unit_set_init(&S->sets[k], S->local.plans[k]) != SKV_OK)
			st = SKV_ENOMEM;
	for (size_t k = 0; k < S->nspecs && st == SKV_OK; k++)
		st = jset_gather(&S->js, k, &S->sets[k], S->local.plans[k], e);
	if (st == SKV_OK && (sched_init(&S->sched, &S->u, S->done, S->nranks) != SKV_OK ||
			     pthread_mutex_init(&S->mu, NULL) != 0))
		st = SKV_ENOMEM;
	if (st == SKV_ENOMEM)
		msg_set(e, "skv-mpi: out of memory");
	return st;
}

/* Every rank reads the same suite: rank 0 reads the file and sends its
 * text; each parses it with the same flags, so all hold the same specs and
 * the same units. */
static int load(mpi_state *S, int argc, char **argv, message *e)
{
	char *text = NULL;
	size_t len = 0;
	uint64_t head[2] = {SKV_OK, 0};
	if (S->rank == 0) {
		head[0] = (uint64_t)suite_read(&text, &len, argv[2], e);
		head[1] = len;
	}
	MPI_Bcast(head, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (head[0] != SKV_OK)
		return (int)head[0];
	len = (size_t)head[1];
	if (S->rank != 0 && !(text = malloc(len + 1)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Bcast(text, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
	text[len] = '\0';
	char *source = strndup(text, len);
	char **args = calloc((size_t)argc + 1, sizeof *args);
	int st = source && args ? SKV_OK : SKV_ENOMEM, report = 0, nargs = 0;
	if (st == SKV_OK)
		st = suite_load(&S->specs, &S->nspecs, &S->m, &report, argv[2], text, len, argc - 3, argv + 3, e);
	free(text);
	if (st == SKV_OK && (S->m.n || report)) {
		msg_set(e, "skv-mpi: %s", S->m.n ? "--shard is for job arrays of build/skv (skv suite FILE --shard=K/N); "
						   "skv-mpi runs the whole suite across its ranks"
						 : "--report: run skv report DIR after the run");
		st = SKV_EINVAL;
	}
	/* the journal's copy of the flags: the parameters only */
	for (int i = 3; st == SKV_OK && i < argc; i++)
		if (strcmp(argv[i], "--out") == 0)
			i++;
		else if (strncmp(argv[i], "--out=", 6) != 0 && strcmp(argv[i], "--resume") != 0 &&
			 strcmp(argv[i], "--estimate") != 0)
			args[nargs++] = argv[i];
	S->m.source_name = argv[2], S->m.source = source, S->m.source_len = len;
	S->m.args = args, S->m.nargs = nargs;
	if (st == SKV_OK)
		st = suite_units_plan(&S->u, S->specs, S->nspecs, 0, e);
	if (st == SKV_ENOMEM && !e->msg)
		msg_set(e, "skv-mpi: out of memory");
	S->threads = st == SKV_OK ? spec_threads(&S->specs[0]) : 1;
	return st;
}

/* Rank 0 ends the job on a failure: one line (with where the finished
 * units are), the journal flushed, every rank stopped. */
static void abort_job(mpi_state *S, int st, message *e)
{
	stop_len = 0;
	size_t kept = 0;
	for (size_t k = 0; S->sets && k < S->nspecs; k++)
		kept += S->sets[k].nhave;
	if (kept)
		fprintf(stderr, "%s (no final file written; the %zu finished units are kept in '%s'%s: --resume continues)\n",
			msg_text(e), kept, jset_path(&S->js, 0), S->js.nfj > 1 ? " and the other lines' folders" : "");
	else
		fprintf(stderr, "%s\n", msg_text(e));
	jset_free(&S->js); /* flushed and closed */
	MPI_Abort(MPI_COMM_WORLD, cli_exit_status(st));
}

/* The CPU seconds this process has used (every thread's). */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Per rank (pairs: busy, cpu): the seconds spent measuring units and the
 * CPU seconds the rank used in all; the load balance, max over mean busy. */
static void summary(const mpi_state *S, const double *bc)
{
	double mx = 0, sum = 0;
	for (int r = 0; r < S->nranks; r++)
		mx = bc[2 * r] > mx ? bc[2 * r] : mx, sum += bc[2 * r];
	fprintf(stderr, "skv-mpi: %d rank%s x %d thread%s: %zu units (%zu from the journal) in %.2f s; busy per rank:",
		S->nranks, S->nranks == 1 ? "" : "s", S->threads, S->threads == 1 ? "" : "s", S->u.nunits,
		S->u.nunits - S->todo, progress_now() - S->t0);
	for (int k = 0; k < 2; k++) {
		for (int r = 0; r < S->nranks && r < 32; r++)
			fprintf(stderr, "%s %.2f", r ? "," : "", bc[2 * r + k]);
		fprintf(stderr, "%s s%s", S->nranks > 32 ? ", ..." : "", k ? "" : "; CPU per rank:");
	}
	fprintf(stderr, "; load balance (max/mean busy) %.3f\n", sum > 0 ? mx / (sum / S->nranks) : 1.0);
}

/* After every unit is in: the busy times gathered, the files written (each
 * spec's through the output folder's temporaries, renamed whole), the
 * journal removed. */
static int finish0(mpi_state *S, message *e)
{
	double *busy = calloc(2 * (size_t)S->nranks, sizeof *busy), mine[2] = {S->local.busy_s, cpu_now() - S->cpu0};
	MPI_Gather(mine, 2, MPI_DOUBLE, busy, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	int st = SKV_OK;
	for (size_t k = 0; k < S->nspecs && st == SKV_OK; k++)
		st = shard_write(&S->specs[k], &S->sets[k], S->local.plans[k], S->sets[k].busy_s, S->command, e);
	char *none = NULL;
	if (st == SKV_OK)
		st = jset_finish(&S->js, &S->m, &none, e); /* the journals removed */
	if (st == SKV_OK && busy)
		summary(S, busy);
	free(busy);
	return st;
}

static int run(mpi_state *S, int argc, char **argv, message *e)
{
	int st = load(S, argc, argv, e);
	if (st == SKV_OK && S->m.estimate) {
		if (S->rank == 0) {
			shard_estimate(stderr, &S->u, NULL, &S->m, S->threads);
			shard_estimate_lines(stderr, &S->u, S->specs);
		}
		return SKV_OK;
	}
	if (st != SKV_OK)
		return st;
	uint64_t st0 = S->rank == 0 ? (uint64_t)setup0(S, e) : SKV_OK;
	S->cpu0 = cpu_now();
	MPI_Bcast(&st0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (st0 != SKV_OK)
		return (int)st0;
	if (S->rank != 0) {
		mpi_worker w;
		st = worker_init(&w, S->specs, &S->u, remote_sink, NULL, e);
		if (st == SKV_OK)
			st = work(S, &w, e);
		const double mine[2] = {w.busy_s, cpu_now() - S->cpu0};
		worker_free(&w);
		quiet_barrier();
		MPI_Gather(mine, 2, MPI_DOUBLE, NULL, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		return st;
	}
	for (size_t g = 0; g < S->u.nunits; g++)
		if (!S->done[g])
			S->todo++, S->work_todo += S->u.work[g];
	shard_estimate(stderr, &S->u, NULL, &S->m, S->threads);
	fprintf(stderr, "skv-mpi: %d rank%s x %d thread%s, %zu units to run\n", S->nranks, S->nranks == 1 ? "" : "s",
		S->threads, S->threads == 1 ? "" : "s", S->todo);
	note_on_term(jset_path(&S->js, 0), S->js.nfj > 1);
	S->t0 = S->last = progress_now();
	st = coordinate(S, e);
	if (st != SKV_OK)
		abort_job(S, st, e);
	quiet_barrier();
	st = finish0(S, e);
	if (st != SKV_OK)
		abort_job(S, st, e);
	return st;
}

static void state_free(mpi_state *S)
{
	for (size_t k = 0; S->specs && k < S->nspecs; k++) {
		spec_free(&S->specs[k]);
		if (S->sets)
			unit_set_free(&S->sets[k]);
	}
	free(S->specs), free(S->sets), free(S->done), free(S->command);
	free((char *)S->m.source), free(S->m.args);
	jset_free(&S->js);
	if (S->sched.u) {
		sched_free(&S->sched);
		pthread_mutex_destroy(&S->mu);
	}
	if (S->local.plans)
		worker_free(&S->local);
	suite_units_free(&S->u);
	msg_free(&S->local_err);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mpirun [-np N] skv-mpi suite FILE [--PARAM=V]... [--out=DIR] [--resume] [--estimate]\n\n"
		   "Runs the suite's work units across the MPI ranks: the largest first, each rank asking rank 0 for\n"
		   "the next batch when done (OpenMP threads inside each rank, --threads or OMP_NUM_THREADS), every\n"
		   "finished unit sent to rank 0 and journalled in DIR/%s; rank 0 writes DIR/EXPERIMENT.csv, .md and\n"
		   ".meta as `skv suite FILE` does (the same bytes; the .meta's command, date and wall time, the\n"
		   "units' seconds summed, are the run's own). A failed or killed rank ends the job with no\n"
		   "final file written; --resume continues from the journals.\n"
		   "exit status: 0 success, 1 runtime failure, 2 bad usage.\n",
		SHARD_JOURNAL);
}

int main(int argc, char **argv)
{
	int prov = 0;
	if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov) != MPI_SUCCESS) {
		fprintf(stderr, "skv-mpi: MPI_Init_thread failed\n");
		return 1;
	}
	mpi_state S;
	memset(&S, 0, sizeof S);
	MPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &S.nranks);
	temp_install();
	message e = {NULL};
	int st = cli_mpfr_check(skv_mpfr_thread_safe(), &e), help = argc == 2 && strcmp(argv[1], "--help") == 0;
	if (st == SKV_OK && help && S.rank == 0)
		usage(stdout);
	else if (st == SKV_OK && !help && (argc < 3 || strcmp(argv[1], "suite") != 0 || argv[2][0] == '-')) {
		msg_set(&e, "skv-mpi: expected 'suite FILE [--flags]' (see skv-mpi --help)");
		st = SKV_EINVAL;
	} else if (st == SKV_OK && !help && prov < MPI_THREAD_FUNNELED) {
		msg_set(&e, "skv-mpi: this MPI does not allow threads (MPI_THREAD_FUNNELED); OpenMP inside a rank needs it");
		st = SKV_EIO;
	}
	if (st == SKV_OK && !help) {
		S.command = cli_join_args(argc, argv);
		st = S.command ? run(&S, argc, argv, &e) : SKV_ENOMEM;
	}
	if (st != SKV_OK && S.rank == 0)
		fprintf(stderr, "%s\n", e.msg ? msg_text(&e) : "skv-mpi: out of memory");
	msg_free(&e);
	state_free(&S);
	MPI_Finalize();
	return cli_exit_status(st);
}
