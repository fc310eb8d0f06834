#include "it_util.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_kafka.h"

extern char **environ;

void it_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

const char *it_db_url(void)
{
    const char *v = getenv("NCMP_TEST_DB_URL");
    if (!v || !*v)
        cr_assert_fail("NCMP_TEST_DB_URL is not set: run the integration tests through ./run test");
    return v;
}

const char *it_kafka(void)
{
    const char *v = getenv("NCMP_TEST_KAFKA");
    if (!v || !*v)
        cr_assert_fail("NCMP_TEST_KAFKA is not set: run the integration tests through ./run test");
    return v;
}

void it_unique(char *buf, size_t len, const char *prefix)
{
    static int counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(buf, len, "%s-%d-%d-%ld%03ld", prefix, (int)getpid(), ++counter, (long)ts.tv_sec,
             ts.tv_nsec / 1000000L);
}

ncmp_config *it_config(void)
{
    ncmp_config *cfg = ncmp_config_new_defaults();
    ncmp_err err;
    cr_assert_eq(ncmp_config_set(cfg, "kafka.bootstrap.servers", it_kafka(), &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ncmp_config_set(cfg, "db.url", it_db_url(), &err), 0, "%s", err.msg);
    return cfg;
}

void it_kafka_opts(ncmp_kafka_opts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->bootstrap_servers = it_kafka();
}

rd_kafka_t *it_reader(const char *group)
{
    ncmp_kafka_opts opts;
    rd_kafka_t *rk = NULL;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_kafka_reader_new(&rk, &opts, "it-reader", group, &err), 0, "%s", err.msg);
    return rk;
}

ncmp_db *it_db(void)
{
    ncmp_db *db = NULL;
    ncmp_err err;
    cr_assert_eq(ncmp_db_open(&db, it_db_url(), NULL, 10, &err), 0, "%s", err.msg);
    return db;
}

void it_db_kill_backend(ncmp_db *db)
{
    ncmp_db *killer = it_db();
    char pid[32];
    const char *params[1] = {pid};

    snprintf(pid, sizeof(pid), "%d", PQbackendPID(ncmp_db_conn(db)));
    cr_assert_eq(it_query_long(killer, "SELECT pg_terminate_backend($1::int)::int", 1, params), 1);
    ncmp_db_close(killer);
    it_sleep_ms(100);
}

long it_query_long(ncmp_db *db, const char *sql, int nparams, const char *const *params)
{
    PGresult *res = NULL;
    ncmp_err err;
    long v;
    cr_assert_eq(ncmp_db_query(db, sql, nparams, params, &res, &err), 0, "%s: %s", sql, err.msg);
    cr_assert_gt(PQntuples(res), 0, "no rows from %s", sql);
    v = PQgetisnull(res, 0, 0) ? 0 : atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return v;
}

long it_wait_long(ncmp_db *db, const char *sql, const char *param, long expected, int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    long v;
    for (;;) {
        v = it_query_long(db, sql, param ? 1 : 0, &param);
        if (v == expected || now_ms() > deadline)
            return v;
        it_sleep_ms(50);
    }
}

void it_create_topic(const char *topic, int partitions)
{
    ncmp_kafka_opts opts;
    ncmp_err err;
    const char *topics[1] = {topic};
    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_kafka_create_topics(&opts, topics, 1, partitions, 30000, &err), 0, "%s",
                 err.msg);
}

void it_publish_events(const char *topic, const char *prefix, long first, long n)
{
    ncmp_kafka_opts opts;
    ncmp_producer *p = NULL;
    ncmp_delivery d;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_producer_new(&p, &opts, NCMP_PRODUCER_DEFAULT, "it-publish", &err), 0, "%s",
                 err.msg);
    ncmp_delivery_init(&d);
    for (long i = first; i < first + n; i++) {
        char id[128], body[256];
        int len;
        snprintf(id, sizeof(id), "%s-%ld", prefix, i);
        len = snprintf(body, sizeof(body), "{\"id\":\"%s\",\"seq\":%ld}", id, i);
        cr_assert_eq(ncmp_producer_send(p, &d, topic, RD_KAFKA_PARTITION_UA, id, strlen(id), body,
                                        (size_t)len, NULL, &err),
                     0, "%s", err.msg);
    }
    cr_assert_eq(ncmp_producer_wait(p, &d, 30000, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

void it_publish_raw(const char *topic, const char *const *values, const size_t *lens, size_t n,
                    const char *const *headers)
{
    ncmp_kafka_opts opts;
    ncmp_producer *p = NULL;
    ncmp_delivery d;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_producer_new(&p, &opts, NCMP_PRODUCER_DEFAULT, "it-publish", &err), 0, "%s",
                 err.msg);
    ncmp_delivery_init(&d);
    for (size_t i = 0; i < n; i++) {
        rd_kafka_headers_t *h = NULL;
        char key[32];
        if (headers) {
            h = rd_kafka_headers_new(4);
            for (size_t k = 0; headers[k]; k += 2)
                rd_kafka_header_add(h, headers[k], -1, headers[k + 1], -1);
        }
        /* one key: the records keep their order on one partition */
        snprintf(key, sizeof(key), "raw");
        cr_assert_eq(ncmp_producer_send(p, &d, topic, RD_KAFKA_PARTITION_UA, key, strlen(key),
                                        values[i], lens[i], h, &err),
                     0, "%s", err.msg);
    }
    cr_assert_eq(ncmp_producer_wait(p, &d, 30000, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

static rd_kafka_t *it_consumer_keep;

size_t it_consume_all(const char *topic, size_t expected, int timeout_ms, rd_kafka_message_t ***out)
{
    rd_kafka_t *rk = it_reader(NULL);
    ncmp_err err;
    rd_kafka_message_t **msgs = NULL;
    size_t n = 0;
    long deadline = now_ms() + timeout_ms;

    /* no group to join: it reads the partitions it is told to, from the
     * start; the topic may be created by the first produce: wait for it */
    if (ncmp_kafka_reader_assign_all(rk, topic, RD_KAFKA_OFFSET_BEGINNING,
                                     (int)(deadline - now_ms()), NULL, &err) != 0) {
        ncmp_kafka_reader_close(rk);
        *out = NULL;
        return 0;
    }
    while (n < expected && now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (!m)
            continue;
        if (m->err) {
            rd_kafka_message_destroy(m);
            continue;
        }
        msgs = realloc(msgs, (n + 1) * sizeof(*msgs));
        msgs[n++] = m;
    }
    *out = msgs;
    /* the records need their client until they are destroyed */
    it_consumer_keep = rk;
    return n;
}

void it_consume_release(rd_kafka_message_t **msgs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rd_kafka_message_destroy(msgs[i]);
    free(msgs);
    ncmp_kafka_reader_close(it_consumer_keep);
    it_consumer_keep = NULL;
}

long it_committed_sum(const char *group, const char *topic, int partitions)
{
    rd_kafka_t *rk = it_reader(group);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(partitions);
    long sum = 0;
    rd_kafka_resp_err_t e;

    for (int i = 0; i < partitions; i++)
        rd_kafka_topic_partition_list_add(parts, topic, i);
    e = rd_kafka_committed(rk, parts, 10000);
    cr_assert_eq(e, 0, "committed: %s", rd_kafka_err2str(e));
    for (int i = 0; i < parts->cnt; i++)
        if (parts->elems[i].offset > 0)
            sum += (long)parts->elems[i].offset;
    rd_kafka_topic_partition_list_destroy(parts);
    ncmp_kafka_reader_close(rk);
    return sum;
}

pid_t it_spawn(const char *path, const char *log_path, const char *const *argv)
{
    pid_t pid = fork();

    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd;
        /* Die with the test: a failed assertion must not leave it running. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* Criterion's pipes to its runner must not outlive the test either. */
        for (int i = 3; i < 1024; i++)
            close(i);
        fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
            dup2(fd, STDOUT_FILENO);
            close(fd);
        }
        setenv("NCMP_DB_URL", it_db_url(), 1);
        setenv("NCMP_KAFKA_BOOTSTRAP_SERVERS", it_kafka(), 1);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

pid_t it_ncmpd_spawn(const char *log_path, const char *const *args)
{
    const char *argv[64];
    int n = 0;

    argv[n++] = NCMPD_PATH;
    for (const char *const *a = args; a && *a && n < 62; a++)
        argv[n++] = *a;
    argv[n++] = "run";
    argv[n] = NULL;
    return it_spawn(NCMPD_PATH, log_path, argv);
}

int it_taken_port(int *fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    *fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(*fd, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(*fd, 1), 0);
    cr_assert_eq(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

int it_free_port(void)
{
    int fd, port = it_taken_port(&fd);

    close(fd);
    return port;
}

pid_t it_ncmpd_start(const char *log_path, const char *const *args)
{
    pid_t pid = it_ncmpd_spawn(log_path, args);
    long deadline = now_ms() + 60000;

    while (now_ms() < deadline) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            cr_assert_fail("ncmpd exited during start-up (status %d); log %s", status, log_path);
        if (it_file_contains(log_path, "running ("))
            return pid;
        it_sleep_ms(50);
    }
    kill(pid, SIGKILL);
    cr_assert_fail("ncmpd did not start within 60 s; log %s", log_path);
    return -1;
}

int it_wait_exit(pid_t pid, int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    int status;

    while (now_ms() < deadline) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -1;
        it_sleep_ms(20);
    }
    return -1;
}

int it_ncmpd_stop(pid_t pid)
{
    int status;
    kill(pid, SIGTERM);
    status = it_wait_exit(pid, 60000);
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        cr_assert_fail("ncmpd did not stop within 60 s of SIGTERM");
    }
    return status;
}

int it_file_contains(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    ncmp_buf b = NCMP_BUF_INIT;
    char chunk[4096];
    size_t got;
    int found;

    if (!f)
        return 0;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(&b, chunk, got);
    fclose(f);
    found = b.data && strstr(b.data, needle) != NULL;
    ncmp_buf_free(&b);
    return found;
}

void it_publish(const char *topic, const it_outgoing *recs, size_t n)
{
    ncmp_kafka_opts opts;
    ncmp_producer *p = NULL;
    ncmp_delivery d;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_producer_new(&p, &opts, NCMP_PRODUCER_DEFAULT, "it-publish", &err), 0, "%s",
                 err.msg);
    ncmp_delivery_init(&d);
    for (size_t i = 0; i < n; i++) {
        rd_kafka_headers_t *h = NULL;
        if (recs[i].headers) {
            h = rd_kafka_headers_new(8);
            for (size_t k = 0; recs[i].headers[k]; k += 2)
                rd_kafka_header_add(h, recs[i].headers[k], -1, recs[i].headers[k + 1], -1);
        }
        cr_assert_eq(ncmp_producer_send(p, &d, topic, RD_KAFKA_PARTITION_UA, recs[i].key,
                                        recs[i].key ? strlen(recs[i].key) : 0, recs[i].value,
                                        recs[i].len, h, &err),
                     0, "%s", err.msg);
    }
    cr_assert_eq(ncmp_producer_wait(p, &d, 30000, &err), 0, "%s", err.msg);
    ncmp_producer_destroy(p);
}

static char *copy_bytes(const void *data, size_t len)
{
    char *s = ncmp_xmalloc(len + 1);
    if (len)
        memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

size_t it_read_topic(const char *topic, size_t at_least, int timeout_ms, it_record **out)
{
    rd_kafka_t *rk = it_reader(NULL);
    ncmp_err err;
    it_record *recs = NULL;
    unsigned char *at_end;
    int nparts = 0;
    size_t n = 0, cap = 0;
    long deadline = now_ms() + timeout_ms;

    /* the end of each partition is an event: "read everything there is" */
    if (ncmp_kafka_reader_assign_all(rk, topic, RD_KAFKA_OFFSET_BEGINNING,
                                     (int)(deadline - now_ms()), &nparts, &err) != 0) {
        ncmp_kafka_reader_close(rk);
        *out = NULL;
        return 0;
    }
    at_end = ncmp_xcalloc((size_t)nparts, 1);
    while (now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        rd_kafka_headers_t *h = NULL;
        int all_at_end = 1;
        if (m && m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->partition >= 0 && m->partition < nparts)
                at_end[m->partition] = 1;
        } else if (m && !m->err) {
            it_record *r;
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                recs = ncmp_xrealloc(recs, cap * sizeof(*recs));
            }
            r = &recs[n++];
            r->key = m->key ? copy_bytes(m->key, m->key_len) : NULL;
            r->value = copy_bytes(m->payload, m->payload ? m->len : 0);
            r->len = m->payload ? m->len : 0;
            r->partition = m->partition;
            r->offset = m->offset;
            r->headers = rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h
                             ? rd_kafka_headers_copy(h)
                             : NULL;
            if (m->partition >= 0 && m->partition < nparts)
                at_end[m->partition] = 0;
        }
        if (m)
            rd_kafka_message_destroy(m);
        for (int i = 0; i < nparts; i++)
            all_at_end &= at_end[i];
        if (all_at_end && n >= at_least)
            break;
    }
    ncmp_kafka_reader_close(rk);
    free(at_end);
    *out = recs;
    return n;
}

void it_records_free(it_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(recs[i].key);
        free(recs[i].value);
        if (recs[i].headers)
            rd_kafka_headers_destroy(recs[i].headers);
    }
    free(recs);
}

const char *it_record_header(const it_record *r, const char *name, char *buf, size_t buflen)
{
    const void *val = NULL;
    size_t size = 0;

    if (!buflen || !r->headers ||
        rd_kafka_header_get_last(r->headers, name, &val, &size) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    if (!val)
        size = 0;
    if (size >= buflen)
        size = buflen - 1;
    if (size)
        memcpy(buf, val, size);
    buf[size] = '\0';
    return buf;
}

void it_scratch_db_create(const char *prefix, char *name, size_t namelen, char *url, size_t urllen)
{
    char sql[256];
    ncmp_err err;
    ncmp_db *admin;
    const char *base = it_db_url();
    const char *slash = strrchr(base, '/');
    const char *query;

    cr_assert_not_null(slash, "NCMP_TEST_DB_URL must be a URL ending in /dbname");
    query = strchr(slash, '?');
    it_unique(name, namelen, prefix);
    for (char *p = name; *p; p++)
        if (*p == '-')
            *p = '_';
    admin = it_db();
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
    cr_assert_eq(ncmp_db_exec(admin, sql, &err), 0, "%s", err.msg);
    ncmp_db_close(admin);
    snprintf(url, urllen, "%.*s/%s%s", (int)(slash - base), base, name, query ? query : "");
}

int it_scratch_db_drop(const char *name)
{
    char sql[256];
    ncmp_err err;
    ncmp_db *admin = NULL;
    const char *url = getenv("NCMP_TEST_DB_URL");
    int rc;

    if (!url || !*url || ncmp_db_open(&admin, url, NULL, 10, &err) != 0)
        return -1;
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
    rc = ncmp_db_exec(admin, sql, &err);
    ncmp_db_close(admin);
    return rc;
}

int it_logged_port(const char *log_path)
{
    FILE *f = fopen(log_path, "r");
    char line[1024];
    int port = 0;

    cr_assert_not_null(f, "no log %s", log_path);
    while (!port && fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "listening on 127.0.0.1:");
        if (p)
            port = atoi(p + strlen("listening on 127.0.0.1:"));
    }
    fclose(f);
    cr_assert_gt(port, 0, "ncmpd logged no HTTP port; log %s", log_path);
    return port;
}

void it_kill_wait(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        *pid = 0;
    }
}

ncmp_consumer *it_intruder(const char *group, const char *instance, const char *topic)
{
    const char *topics[1] = {topic};
    ncmp_consumer *c = NULL;
    ncmp_kafka_opts opts;
    ncmp_err err;

    it_kafka_opts(&opts);
    cr_assert_eq(ncmp_consumer_new(&c, &opts, group, instance, topics, 1, &err), 0, "%s", err.msg);
    return c;
}

void it_intruder_poll(ncmp_consumer *c, int ms)
{
    rd_kafka_message_t *msgs[16];
    size_t n = 0;
    ncmp_err err;

    if (ncmp_consumer_poll(c, msgs, 16, ms, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            rd_kafka_message_destroy(msgs[i]);
}
