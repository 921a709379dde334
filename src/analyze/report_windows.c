/* A heavy backend's window per process (report_model.h, report_window): what it did,
 * which entries were inside it, and when, on the run's clock. */
#include "report_model.h"

#include <errno.h>
#include <stdlib.h>

const char *report_window_state_name(report_window_state s)
{
    static const char *const names[] = {"not_run", "not_reached", "open", "closed", "cut"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

int report_windows_build(const run_model *m, report_window **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        n += m->workers[i].window.backend[0] != 0;
    if (!n)
        return 0;
    report_window *ws = calloc(n, sizeof *ws);
    if (!ws)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *wk = &m->workers[i];
        const rm_window *w = &wk->window;
        if (!w->backend[0])
            continue;
        report_window *r = &ws[(*count)++];
        r->worker = i;
        r->w = w;
        r->asked_last = w->stop ? w->stop - 1 : 0;
        if (!w->opened_entry) {
            r->state = w->error[0] ? REPORT_WINDOW_NOT_RUN : REPORT_WINDOW_NOT_REACHED;
            continue;
        }
        r->opened = 1;
        r->first_entry = w->opened_entry;
        r->open_at_ns = RM_RUN_CLOCK_NS(m, wk, w->open_ns);
        if (!w->close_ns) {
            r->state = REPORT_WINDOW_OPEN;
            r->last_entry = w->entries; /* so far */
            continue;
        }
        r->has_close = 1;
        r->close_at_ns = RM_RUN_CLOCK_NS(m, wk, w->close_ns);
        r->open_for_ns = r->close_at_ns > r->open_at_ns ? r->close_at_ns - r->open_at_ns : 0;
        r->state = w->closed_entry ? REPORT_WINDOW_CLOSED : REPORT_WINDOW_CUT;
        r->last_entry = w->closed_entry > w->opened_entry ? w->closed_entry - 1
                        : w->closed_entry ? w->opened_entry : w->entries;
    }
    *out = ws;
    return 0;
}
