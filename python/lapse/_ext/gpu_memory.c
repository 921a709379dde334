/* VRAM from torch: the readings lapse._torch_memory takes, handed to the session
 * (session/gpu_memory.h), which keeps the largest peaks for its file. */
#include "ext.h"

#include "session/gpu_memory.h"

#define READING_MAX_DEVICES 64

/* gpu_memory_reading([(index, uuid, name, allocated_peak, reserved_peak)], error) */
static PyObject *gpu_memory_reading(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *list;
    const char *error;
    if (!PyArg_ParseTuple(args, "O!s", &PyList_Type, &list, &error))
        return NULL;
    store_gpu_memory_device devs[READING_MAX_DEVICES];
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n > READING_MAX_DEVICES)
        n = READING_MAX_DEVICES;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned int index;
        unsigned long long allocated, reserved;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "IssKK;gpu_memory_reading: a device is "
                              "(index, uuid, name, allocated_peak, reserved_peak)",
                              &index, &devs[i].uuid, &devs[i].name, &allocated, &reserved))
            return NULL;
        devs[i].index = index;
        devs[i].allocated_peak_bytes = allocated;
        devs[i].reserved_peak_bytes = reserved;
    }
    return PyBool_FromLong(lapse_session_gpu_memory_reading(devs, (uint32_t)n, error) == 0);
}

PyMethodDef ext_gpu_memory_methods[] = {
    {"gpu_memory_reading", gpu_memory_reading, METH_VARARGS,
     "gpu_memory_reading([(index, uuid, name, allocated_peak, reserved_peak)], error) -> bool:\n"
     "one reading of torch.cuda's peaks (error: why it failed, else \"\") for the session's\n"
     "file; False without an active session"},
    {NULL, NULL, 0, NULL},
};
