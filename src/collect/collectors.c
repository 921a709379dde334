/* The table of collectors the session runs. */
#include "collector.h"

extern const collector collect_cpu, collect_process, collect_device, collect_activity;

const collector *const collectors[COLLECT_MAX + 1] = {&collect_cpu, &collect_process, &collect_device,
                                                      &collect_activity};
