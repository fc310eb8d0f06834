/*
 * Helpers of the integration tests: they run on the real PostgreSQL and
 * Kafka that `./run test` starts, found through NCMP_TEST_DB_URL and
 * NCMP_TEST_KAFKA. Every test works on its own topics and consumer group,
 * so tests can run in parallel and repeat.
 */
#ifndef IT_UTIL_H
#define IT_UTIL_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ncmp_config.h"
#include "ncmp_db.h"
#include "ncmp_kafka.h"

const char *it_db_url(void);
const char *it_kafka(void);

/* A name unique to this test run: "<prefix>-<pid>-<n>-<time>". */
void it_unique(char *buf, size_t len, const char *prefix);

/* Defaults with the test broker and database. Owned by the caller. */
ncmp_config *it_config(void);

/* Kafka client options for the test broker (ncmp_kafka's defaults). */
void it_kafka_opts(ncmp_kafka_opts *opts);

/* A reader (ncmp_kafka_reader_new) named `group` on the test broker
 * (asserts). Closed with ncmp_kafka_reader_close. */
rd_kafka_t *it_reader(const char *group);

/* Open the test database (asserts). */
ncmp_db *it_db(void);

/* End db's connection from the server's side (pg_terminate_backend, on a
 * connection of its own; asserts) and give it 100 ms to be gone. */
void it_db_kill_backend(ncmp_db *db);

/* First column of the first row of `sql` as a number (asserts). */
long it_query_long(ncmp_db *db, const char *sql, int nparams, const char *const *params);

/* Poll `sql` (one parameter) until it returns `expected` or timeout_ms
 * passes; returns the last value. */
long it_wait_long(ncmp_db *db, const char *sql, const char *param, long expected, int timeout_ms);

void it_create_topic(const char *topic, int partitions);

/* Publish `n` JSON events {"id":"<prefix>-<i>","seq":i} keyed by id,
 * starting at `first`; waits for all acknowledgements (asserts). */
void it_publish_events(const char *topic, const char *prefix, long first, long n);

/* Publish raw records, each with the given headers (NULL-terminated
 * name/value pairs, may be NULL). */
void it_publish_raw(const char *topic, const char *const *values, const size_t *lens, size_t n,
                    const char *const *headers);

/* Read every record of `topic` from the beginning until it has seen
 * `expected` records or timeout_ms passed. *out gets the records; returns
 * the count. Release them with it_consume_release. */
size_t it_consume_all(const char *topic, size_t expected, int timeout_ms,
                      rd_kafka_message_t ***out);
void it_consume_release(rd_kafka_message_t **msgs, size_t n);

/* A member of `group` with static instance id `instance`, subscribed to
 * `topic`: joining fences the member that held that id before. */
ncmp_consumer *it_intruder(const char *group, const char *instance, const char *topic);

/* Serve `c` for about `ms`, dropping whatever it reads. */
void it_intruder_poll(ncmp_consumer *c, int ms);

/* Sum over partitions of the offsets committed in Kafka by `group` for
 * `topic`. */
long it_committed_sum(const char *group, const char *topic, int partitions);

/* Start `ncmpd run` with extra flags (NULL-terminated), logging to
 * log_path; returns once it reports running, or asserts. */
pid_t it_ncmpd_start(const char *log_path, const char *const *args);

/* Start program `path` with argv (argv[0] included, NULL-terminated),
 * stdout and stderr to log_path; it dies with the test. */
pid_t it_spawn(const char *path, const char *log_path, const char *const *argv);

/* A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
int it_free_port(void);

/* A TCP port on 127.0.0.1 held by a listening socket, *fd (the caller's
 * to close): a port that is taken. */
int it_taken_port(int *fd);

/* The HTTP port an ncmpd logged ("listening on 127.0.0.1:<port>") in
 * log_path (asserts it did). */
int it_logged_port(const char *log_path);

/* Start ncmpd and do not wait (for crash tests). */
pid_t it_ncmpd_spawn(const char *log_path, const char *const *args);

/* Wait for the process to exit; returns the waitpid status, or -1 on
 * timeout. */
int it_wait_exit(pid_t pid, int timeout_ms);

/* SIGKILL *pid and reap it, then *pid = 0; nothing when *pid <= 0. */
void it_kill_wait(pid_t *pid);

/* SIGTERM, then wait; returns the waitpid status (asserts it exited). */
int it_ncmpd_stop(pid_t pid);

/* Does the file contain `needle`? */
int it_file_contains(const char *path, const char *needle);

void it_sleep_ms(long ms);

/* --- records with keys and headers, read back as copies ------------------ */

/* A record to publish. `headers` are NULL-terminated name/value pairs (may
 * be NULL); `key` may be NULL. All borrowed. */
typedef struct it_outgoing {
    const char *key;
    const void *value;
    size_t len;
    const char *const *headers;
} it_outgoing;

/* Publish `recs` in order through one producer (records with one key keep
 * their order); waits for every acknowledgement (asserts). */
void it_publish(const char *topic, const it_outgoing *recs, size_t n);

/* A record read back. Everything is a copy owned by the array that
 * it_read_topic returns (release with it_records_free). */
typedef struct it_record {
    char *key;   /* NUL-terminated; NULL when the record has no key */
    char *value; /* the value plus a NUL (so JSON can be used as a string) */
    size_t len;  /* of the value, without the NUL */
    int32_t partition;
    int64_t offset;
    rd_kafka_headers_t *headers; /* NULL when the record has none */
} it_record;

/* Read `topic` from the beginning until at least `at_least` records were
 * read and every partition is at its end, or timeout_ms passed. Records of
 * one partition keep their order. Returns the count; *out (NULL when none)
 * is owned by the caller. */
size_t it_read_topic(const char *topic, size_t at_least, int timeout_ms, it_record **out);
void it_records_free(it_record *recs, size_t n);

/* Value of the last header `name` of `r` as a NUL-terminated copy in buf
 * (cut to buflen), or NULL when absent. */
const char *it_record_header(const it_record *r, const char *name, char *buf, size_t buflen);

/* --- scratch databases --------------------------------------------------- */

/* CREATE DATABASE with a name unique to this run, made from `prefix`
 * (letters, digits, '_'); writes the name and a URL to it, on the test
 * server (asserts). */
void it_scratch_db_create(const char *prefix, char *name, size_t namelen, char *url, size_t urllen);

/* DROP DATABASE IF EXISTS `name` WITH (FORCE). Returns 0 or -1; never
 * asserts, so that a test's clean-up can call it after a failure. */
int it_scratch_db_drop(const char *name);

#endif
