#include "ncmp_fault.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fault_point_name[128];
static long fault_at;
static atomic_long fault_hits;

int ncmp_fault_setup(const char *spec, ncmp_err *err)
{
    const char *colon;
    char *end;
    long n;

    fault_point_name[0] = '\0';
    atomic_store(&fault_hits, 0);
    if (!spec || !*spec)
        return 0;
    colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(fault_point_name))
        return ncmp_err_set(err, NCMP_ERR_FATAL, "debug.fault: expected <point>:<n>, got '%s'",
                            spec);
    n = strtol(colon + 1, &end, 10);
    if (*end || n < 1)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "debug.fault: bad count in '%s'", spec);
    memcpy(fault_point_name, spec, (size_t)(colon - spec));
    fault_point_name[colon - spec] = '\0';
    fault_at = n;
    return 0;
}

void ncmp_fault_point(const char *point)
{
    if (!fault_point_name[0] || strcmp(point, fault_point_name) != 0)
        return;
    if (atomic_fetch_add(&fault_hits, 1) + 1 == fault_at) {
        static const char msg[] = "ncmpd: debug.fault point reached; killing the process\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void)ignored;
        raise(SIGKILL);
    }
}
