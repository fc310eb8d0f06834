/*
 * ncmp_fault: crash points for the fault tests.
 *
 * With debug.fault = "<point>:<n>", the n-th time any thread reaches
 * ncmp_fault_point("<point>") the process kills itself with SIGKILL, as a
 * power cut or the OOM killer would. Without the option a point costs one
 * comparison.
 */
#ifndef NCMP_FAULT_H
#define NCMP_FAULT_H

#include "ncmp_err.h"

/* Arm from a spec ("" disarms). */
int ncmp_fault_setup(const char *spec, ncmp_err *err);

void ncmp_fault_point(const char *point);

#endif
