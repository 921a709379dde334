#include "report_windows.h"

#include "caveat_text.h"
#include "format.h"

void report_windows_text(FILE *out, const report_model *r)
{
    if (!r->window_count)
        return;
    fputs("\nBACKEND WINDOW  (backend=: a heavy profiler for entries start .. stop - 1 of a span)\n", out);
    char name[512], from[32], to[32], len[32];
    for (uint32_t i = 0; i < r->window_count; i++) {
        const report_window *rw = &r->windows[i];
        const rm_window *w = rw->w;
        fprintf(out, "  %s: %s for entries %llu..%llu of %s\n",
                caveat_worker_name(name, sizeof name, &r->m->workers[rw->worker]), w->backend,
                (unsigned long long)w->start, (unsigned long long)rw->asked_last, w->phase);
        switch (rw->state) {
        case REPORT_WINDOW_NOT_RUN:
            fputs("    did not run (CAVEATS say why); no trace\n", out);
            continue;
        case REPORT_WINDOW_NOT_REACHED:
            fprintf(out, "    did not open: %llu entr%s of %s, fewer than %llu; no trace\n",
                    (unsigned long long)w->entries, w->entries == 1 ? "y" : "ies", w->phase,
                    (unsigned long long)w->start);
            continue;
        default:
            break;
        }
        fmt_duration(from, sizeof from, (double)rw->open_at_ns);
        if (rw->has_close) {
            fmt_duration(to, sizeof to, (double)rw->close_at_ns);
            fmt_duration(len, sizeof len, (double)rw->open_for_ns);
            fprintf(out, "    entries %llu..%llu inside it%s, open from %s to %s after the run's start (%s)\n",
                    (unsigned long long)rw->first_entry, (unsigned long long)rw->last_entry,
                    rw->state == REPORT_WINDOW_CUT ? " (the session stopped inside it)" : "",
                    from, to, len);
        } else {
            fprintf(out, "    open from %s after the run's start, still open when its file was "
                         "written (entries %llu..%llu so far)\n",
                    from, (unsigned long long)rw->first_entry, (unsigned long long)rw->last_entry);
        }
        if (w->trace[0])
            fprintf(out, "    trace %s\n", w->trace);
        else if (!rw->has_close)
            fputs("    no trace yet (the backend writes it when the window closes)\n", out);
        else if (w->error[0])
            fputs("    no trace (CAVEATS say why)\n", out);
        else
            fputs("    no trace (the backend named none and gave no reason)\n", out);
    }
}

void report_windows_json(json_out *j, const report_model *r)
{
    json_begin_array(j, "backend_windows");
    for (uint32_t i = 0; i < r->window_count; i++) {
        const report_window *rw = &r->windows[i];
        const rm_window *w = rw->w;
        const rm_worker *wk = &r->m->workers[rw->worker];
        json_begin_object(j, NULL);
        json_i64(j, "pid", wk->pid);
        json_str(j, "host", wk->host);
        json_str(j, "role", wk->role);
        json_str(j, "backend", w->backend);
        json_str(j, "phase", w->phase);
        json_u64(j, "start", w->start);
        json_u64(j, "stop", w->stop);
        json_str(j, "state", report_window_state_name(rw->state));
        json_u64(j, "entries", w->entries);
        if (rw->opened) {
            json_u64(j, "first_entry", rw->first_entry);
            json_u64(j, "last_entry", rw->last_entry);
            json_ns(j, "open_at_ns", (double)rw->open_at_ns);
        } else {
            json_null(j, "first_entry");
            json_null(j, "last_entry");
            json_null(j, "open_at_ns");
        }
        if (rw->has_close)
            json_ns(j, "close_at_ns", (double)rw->close_at_ns);
        else
            json_null(j, "close_at_ns");
        json_str(j, "trace", w->trace[0] ? w->trace : NULL);
        json_str(j, "error", w->error[0] ? w->error : NULL);
        json_end_object(j);
    }
    json_end_array(j);
}
