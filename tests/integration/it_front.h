/*
 * The harness of the suites of ncmpd in front of DMI stubs (ProvMnS, data
 * jobs): ncmpd (registration, module-sync, lcm-relay, rest) on a scratch
 * database and topics of its own, one or two DMI stubs with small delays,
 * and HTTP calls with libcurl. One case per test process (Criterion forks
 * each test); the suite's .fini (it_front_cleanup) kills what a failed
 * test left running.
 */
#ifndef NCMP_IT_FRONT_H
#define NCMP_IT_FRONT_H

#include <json-c/json.h>
#include <sys/types.h>

#include "ncmp_buf.h"
#include "ncmp_db.h"

#define IT_FRONT_MAXFLAGS 32
#define IT_FRONT_STUBS    2

typedef struct front_case {
    char topic[128]; /* registration; the other topics derive from it */
    char dbname[96], dburl[512];
    char log[512];
    char stub_log[IT_FRONT_STUBS][512], port_file[IT_FRONT_STUBS][512];
    char flag[IT_FRONT_MAXFLAGS][640];
    int nflags;
    ncmp_db *db;
    pid_t pid, stub[IT_FRONT_STUBS];
    int port;                     /* ncmpd's REST port */
    char dmi[IT_FRONT_STUBS][64]; /* the stubs' URLs */
} front_case;

typedef struct front_reply {
    long status;
    char content_type[128]; /* "" when none */
    char retry_after[16];   /* the Retry-After header; "" when none */
    ncmp_buf body;
    json_object *json; /* the body parsed, or NULL */
} front_reply;

/* Start the stubs (`stubs`, 1 or 2) and ncmpd with the common flags and
 * `extra` (NULL-terminated, may be NULL; a "%s" in one is replaced by the
 * first stub's URL). */
front_case *it_front_start(const char *name, int stubs, const char *const *extra);

/* Stop ncmpd with SIGTERM (asserting a clean exit), then everything. */
void it_front_fini(front_case *c);

/* Kill whatever is left (the suite's .fini). */
void it_front_cleanup(void);

/* One request to `base` + `path`; `body_sq` single-quoted JSON sent with
 * double quotes, or NULL; `headers` NULL-terminated "Name: value", or
 * NULL. */
void it_front_http(const char *base, const char *method, const char *path, const char *body_sq,
                   const char *const *headers, front_reply *r);

/* The same to ncmpd. */
void it_front_call(front_case *c, const char *method, const char *path, const char *body_sq,
                   const char *const *headers, front_reply *r);

void it_front_reply_free(front_reply *r);

/* Member `key` of object `o` as a string; NULL when absent or null. */
const char *it_front_field(json_object *o, const char *key);

/* GET <stub n>/stub/...: a JSON value (owned by the caller). */
json_object *it_front_stub_get(front_case *c, int n, const char *what);

/* Counter `name` of stub n's /stub/stats. */
long it_front_stub_count(front_case *c, int n, const char *name);

/* Wait until `n` handles are READY in the database and ch-<first>..
 * answer READY through the REST API (ncmpd's map follows the lifecycle
 * events). */
void it_front_wait_ready(front_case *c, int first, int n);

#endif
