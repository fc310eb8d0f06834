/*
 * The CPS suites' harness: ncmpd running the cps role (alone or with
 * rest) on a scratch database of its own, and HTTP calls to it with
 * libcurl. One case per test process (Criterion forks each test); the
 * suite's .fini (it_cps_cleanup) kills what a failed test left running.
 */
#ifndef NCMP_IT_CPS_H
#define NCMP_IT_CPS_H

#include <stddef.h>
#include <sys/types.h>

#include "ncmp_buf.h"

typedef struct cps_case {
    char name[128];
    char dbname[96];
    char dburl[512];
    char log[512];
    char flags[12][640];
    int nflags;
    char events_topic[200]; /* with the cps-relay role: its topic */
    pid_t pid;
    int port;
} cps_case;

typedef struct reply {
    long status;
    ncmp_buf body;    /* NUL-terminated */
    ncmp_buf headers; /* the answer's header lines, NUL-terminated */
} reply;

void it_cps_reply_free(reply *r);

/* Start ncmpd with `roles` ("cps", "rest,cps") on a new scratch database;
 * */
cps_case *it_cps_start(const char *name, const char *roles);

/* The same with one more ncmpd option (`extra`, "--name=value"; NULL:
 * none). With the cps-relay role the case gets a data-updated topic of
 * its own (events_topic). */
cps_case *it_cps_start_with(const char *name, const char *roles, const char *extra);

/* Stop its ncmpd, keeping the database; SIGTERM must stop it cleanly. */
void it_cps_stop(cps_case *c);

/* Start ncmpd again on the case's database, with the case's options and
 * `extra` (NULL: none); the last process must have exited (it_cps_stop). */
void it_cps_restart(cps_case *c, const char *extra);

/* Stop it (SIGTERM must stop it cleanly) and drop its database. */
void it_cps_fini(cps_case *c);

/* Kill and drop whatever is left (the suite's .fini). */
void it_cps_cleanup(void);

/* One request; with `file` (a path) the body is multipart with it as part
 * `file`. */
void it_cps_call(cps_case *c, const char *method, const char *path, const char *file, reply *r);

/* One request with a body of type `ctype` (NULL: application/json). */
void it_cps_send(cps_case *c, const char *method, const char *path, const char *file,
                 const char *ctype, const char *body, size_t len, reply *r);

/* One request with an Accept header (`accept`, NULL: none) and, when
 * name1 is set, a multipart body of part `name1` from file `file1` and
 * part `name2` from `file2` (name2 may be NULL). */
void it_cps_request(cps_case *c, const char *method, const char *path, const char *accept,
                    const char *name1, const char *file1, const char *name2, const char *file2,
                    reply *r);

/* The request answers `status`, and its body holds `needle` (NULL: any). */
void it_cps_expect(cps_case *c, const char *method, const char *path, const char *file, long status,
                   const char *needle);

void it_cps_write_file(const char *path, const char *text);

/* /tmp/<case name>-<suffix> */
void it_cps_temp_path(char *out, size_t len, const cps_case *c, const char *suffix);

#endif
