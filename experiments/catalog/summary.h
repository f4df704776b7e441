/* summary.h - the findings paragraph of each experiment's section of REPORT.md, every number computed from its CSV. */
#ifndef SKV_SUMMARY_H
#define SKV_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "results/results.h"

/* The threshold of the LSE-magnitude finding: the normwise error above which
 * an output is taken as wrong in the third significant digit. */
#define SUMMARY_THRESHOLD 1e-3

/* Writes the findings of experiment r (dispatched on r->name; an unknown
 * experiment gets the generic findings) as Markdown: two or three sentences,
 * and for some experiments a small table of the computed numbers. Every
 * number is computed from r. SKV_EINVAL with "file:line: what" in err when
 * a column the findings need holds something that is not a number;
 * SKV_ENOMEM; SKV_EIO when writing fails. */
int summary_write(FILE *f, const results *r, char *err, size_t errlen);

/* The description of a known experiment for REPORT.md, NULL for others. */
const char *summary_about(const char *experiment);

#endif
