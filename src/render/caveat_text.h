/* The wording of a caveat (analyze/caveats.h): one sentence that names what it is
 * about. The text and JSON reports and both sides of a diff print this same
 * sentence. */
#ifndef LAPSE_RENDER_CAVEAT_TEXT_H
#define LAPSE_RENDER_CAVEAT_TEXT_H

#include "analyze/caveats.h"

#include <stddef.h>

#define CAVEAT_TEXT_MAX 4096

/* The sentence of c, into buf (CAVEAT_TEXT_MAX bytes are always enough; longer
 * lists are cut at "..."). Returns buf. */
char *caveat_text(const run_model *m, const caveat *c, char *buf, size_t n);

/* "worker pid 123 on node07 (rank 3)" */
char *caveat_worker_name(char *buf, size_t n, const rm_worker *w);

struct json_out;
/* The caveats of l as JSON objects into an open array; side ("a" or "b" in a diff,
 * else NULL) is written as "side". */
void caveat_list_json(struct json_out *j, const run_model *m, const caveat_list *l,
                      const char *side);

#endif
