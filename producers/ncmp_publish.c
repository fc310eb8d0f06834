/*
 * ncmp-publish: publish records to a Kafka topic.
 *
 *   ncmp-publish -t TOPIC -n COUNT          COUNT synthetic JSON events
 *   ncmp-publish -t TOPIC -f FILE           one record per line of FILE ("-": stdin)
 *
 * Synthetic events are {"id":"evt-<i>","seq":<i>,"source":"ncmp-publish"},
 * keyed by their id. A live progress line is printed on a terminal unless
 * --quiet; the last line is a summary. Exit status 0 when every record was
 * acknowledged by the broker.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncmp_buf.h"
#include "ncmp_kafka.h"
#include "ncmp_log.h"

static const char usage[] =
    "Usage: ncmp-publish -t TOPIC (-n COUNT | -f FILE) [options]\n"
    "\n"
    "  -b, --bootstrap HOST:PORT  Kafka brokers (default: $NCMP_KAFKA_BOOTSTRAP_SERVERS\n"
    "                             or 127.0.0.1:9092)\n"
    "  -t, --topic TOPIC          topic to publish to\n"
    "  -n, --count N              publish N synthetic JSON events\n"
    "  -f, --file FILE            publish each line of FILE as one record (- = stdin)\n"
    "  -k, --key KEY              key of every record (default: the event id; none for -f)\n"
    "  -H, --header NAME=VALUE    add a header to every record (repeatable)\n"
    "  -q, --quiet                no progress line\n"
    "  -h, --help                 this text\n";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"bootstrap", required_argument, 0, 'b'},
                                         {"topic", required_argument, 0, 't'},
                                         {"count", required_argument, 0, 'n'},
                                         {"file", required_argument, 0, 'f'},
                                         {"key", required_argument, 0, 'k'},
                                         {"header", required_argument, 0, 'H'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *bootstrap = getenv("NCMP_KAFKA_BOOTSTRAP_SERVERS");
    const char *topic = NULL, *file = NULL, *key = NULL;
    const char *headers[32];
    int nheaders = 0;
    long count = -1;
    int quiet = 0, c;
    ncmp_kafka_opts kopts = {0};
    ncmp_producer *producer = NULL;
    ncmp_delivery delivery;
    ncmp_err err;
    long sent = 0;
    double t0, last = 0;
    int progress;
    FILE *in = NULL;
    char *line = NULL;
    size_t linecap = 0;
    int rc = 1;

    while ((c = getopt_long(argc, argv, "b:t:n:f:k:H:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            bootstrap = optarg;
            break;
        case 't':
            topic = optarg;
            break;
        case 'n':
            count = strtol(optarg, NULL, 10);
            break;
        case 'f':
            file = optarg;
            break;
        case 'k':
            key = optarg;
            break;
        case 'H':
            if (nheaders == 32 || !strchr(optarg, '=')) {
                fprintf(stderr, "ncmp-publish: bad or too many --header '%s'\n", optarg);
                return 2;
            }
            headers[nheaders++] = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (!topic || (count < 0) == !file) {
        fprintf(stderr, "ncmp-publish: need --topic and exactly one of --count, --file\n\n%s",
                usage);
        return 2;
    }
    progress = !quiet && isatty(STDERR_FILENO);
    ncmp_log_setup(NCMP_LOG_WARN, NCMP_LOG_TEXT, stderr);
    kopts.bootstrap_servers = bootstrap && *bootstrap ? bootstrap : "127.0.0.1:9092";
    if (ncmp_producer_new(&producer, &kopts, NCMP_PRODUCER_DEFAULT, "ncmp-publish", &err) != 0)
        goto done;
    if (file) {
        in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
        if (!in) {
            ncmp_err_set(&err, NCMP_ERR_FATAL, "cannot open %s", file);
            goto done;
        }
    }
    ncmp_delivery_init(&delivery);
    t0 = now_s();
    for (;;) {
        char id[64];
        char body[256];
        const char *value;
        size_t len;
        const char *k = key;
        rd_kafka_headers_t *hdrs = NULL;

        if (in) {
            ssize_t got = getline(&line, &linecap, in);
            if (got < 0)
                break;
            if (got && line[got - 1] == '\n')
                line[--got] = '\0';
            value = line;
            len = (size_t)got;
        } else {
            if (sent >= count)
                break;
            snprintf(id, sizeof(id), "evt-%ld", sent + 1);
            len = (size_t)snprintf(body, sizeof(body),
                                   "{\"id\":\"%s\",\"seq\":%ld,\"source\":\"ncmp-publish\"}", id,
                                   sent + 1);
            value = body;
            if (!k)
                k = id;
        }
        if (nheaders) {
            hdrs = rd_kafka_headers_new((size_t)nheaders);
            for (int i = 0; i < nheaders; i++) {
                const char *eq = strchr(headers[i], '=');
                rd_kafka_header_add(hdrs, headers[i], eq - headers[i], eq + 1, -1);
            }
        }
        if (ncmp_producer_send(producer, &delivery, topic, RD_KAFKA_PARTITION_UA, k,
                               k ? strlen(k) : 0, value, len, hdrs, &err) != 0)
            goto done;
        sent++;
        if (progress && now_s() - last > 0.2) {
            last = now_s();
            fprintf(stderr, "\r%ld records, %.0f/s   ", sent, sent / (last - t0 + 1e-9));
        }
    }
    if (ncmp_producer_wait(producer, &delivery, 60000, &err) != 0)
        goto done;
    if (progress)
        fputc('\n', stderr);
    if (!quiet)
        fprintf(stderr, "published %ld records to %s in %.3f s\n", sent, topic, now_s() - t0);
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "ncmp-publish: %s\n", err.msg);
    if (in && in != stdin)
        fclose(in);
    free(line);
    ncmp_producer_destroy(producer);
    return rc;
}
