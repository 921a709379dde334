/* ACTIVITY beside torch.profiler: Kineto records CUDA through CUPTI, which takes one
 * subscriber per process, and registers CUPTI's activity buffers as its own; lapse's
 * ACTIVITY collector lets CUPTI go while torch.profiler records CUDA and takes it back
 * after (lapse/_torch_profiler.py calls these around torch's profiler). The pauses
 * are counted in the file (META activity_pause*), and the report says them. */
#include "ext.h"

#include "session/session.h"

static PyObject *activity_yield(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(lapse_session_activity_yield() > 0);
}

static PyObject *activity_resume(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(lapse_session_activity_resume() == 0);
}

PyMethodDef ext_activity_yield_methods[] = {
    {"activity_yield", activity_yield, METH_NOARGS,
     "activity_yield() -> True when ACTIVITY was collecting and let CUPTI go (its records\n"
     "flushed and kept, its kinds disabled, unsubscribed); False: nothing to let go"},
    {"activity_resume", activity_resume, METH_NOARGS,
     "activity_resume() -> True when ACTIVITY took CUPTI back after activity_yield (or had\n"
     "nothing to take back); False: CUPTI refused, nothing more is collected and the file's\n"
     "GPU_ACTIVITY note says why"},
    {NULL, NULL, 0, NULL},
};
