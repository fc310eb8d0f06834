#include "dmistub_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_text.h"

typedef enum opt_type {
    OPT_STR,  /* a string, replaced */
    OPT_LONG, /* an integer within [min, max] */
    OPT_FLAG, /* a boolean: the flag takes no value; the environment says 1/0 */
    OPT_LIST, /* comma-separated tags: each flag appends, the environment sets */
    OPT_KV,   /* key=value entries: each flag appends one */
} opt_type;

typedef struct opt_def {
    const char *name;
    const char *env; /* NULL: no environment variable */
    opt_type type;
    const char *def;
    long min, max;
    size_t offset;
    const char *arg; /* placeholder in --help */
    const char *help;
} opt_def;

#define DAY_MS 86400000L
#define OFF(f) offsetof(dmistub_opts, f)

static const opt_def opt_table[] = {
    {"host", "DMI_STUB_HOST", OPT_STR, "127.0.0.1", 0, 0, OFF(host), "ADDR",
     "address to listen on (a name or an IPv4/IPv6 literal)"},
    {"port", "SERVER_PORT", OPT_LONG, "8092", 0, 65535, OFF(port), "PORT",
     "TCP port; 0 picks a free one (see --port-file)"},
    {"port-file", "DMI_STUB_PORT_FILE", OPT_STR, "", 0, 0, OFF(port_file), "FILE",
     "write the bound port to FILE once listening"},
    {"threads", "DMI_STUB_THREADS", OPT_LONG, "2", 1, 64, OFF(threads), "N",
     "HTTP event-loop threads (epoll; delays never hold a thread)"},
    {"max-body-bytes", "DMI_STUB_MAX_BODY_BYTES", OPT_LONG, "67108864", 1024, 1L << 30,
     OFF(max_body_bytes), "N", "largest request body accepted (413 above)"},
    {"auth", "DMI_STUB_AUTH", OPT_STR, "", 0, 0, OFF(auth), "USER:PASSWORD",
     "require HTTP Basic auth on /dmi/ (401 otherwise); empty: no check"},
    {"module-references-delay-ms", "MODULE_REFERENCES_DELAY_MS", OPT_LONG, "100", 0, DAY_MS,
     OFF(module_references_delay_ms), "MS", "delay of POST /dmi/v1/ch/{id}/modules"},
    {"module-resources-delay-ms", "MODULE_RESOURCES_DELAY_MS", OPT_LONG, "1000", 0, DAY_MS,
     OFF(module_resources_delay_ms), "MS", "delay of POST /dmi/v1/ch/{id}/moduleResources"},
    {"read-delay-ms", "READ_DATA_FOR_CM_HANDLE_DELAY_MS", OPT_LONG, "300", 0, DAY_MS,
     OFF(read_delay_ms), "MS",
     "delay of a pass-through read, and of a batch read (once per request)"},
    {"write-delay-ms", "WRITE_DATA_FOR_CM_HANDLE_DELAY_MS", OPT_LONG, "670", 0, DAY_MS,
     OFF(write_delay_ms), "MS", "delay of a pass-through create/update/patch/delete"},
    {"provmns-read-delay-ms", "PROVMNS_READ_DELAY_MS", OPT_LONG, "300", 0, DAY_MS,
     OFF(provmns_read_delay_ms), "MS", "delay of GET /ProvMnS/v1/{fdn}"},
    {"provmns-write-delay-ms", "PROVMNS_WRITE_DELAY_MS", OPT_LONG, "670", 0, DAY_MS,
     OFF(provmns_write_delay_ms), "MS", "delay of PUT, PATCH and DELETE /ProvMnS/v1/{fdn}"},
    {"datajob-delay-ms", "DMI_STUB_DATAJOB_DELAY_MS", OPT_LONG, "0", 0, DAY_MS,
     OFF(datajob_delay_ms), "MS",
     "delay of a data-job sub-job, POST /dmi/v1/cmwriteJob or cmreadJob"},
    {"busy-ms", "MODULE_INITIAL_PROCESSING_DELAY_MS", OPT_LONG, "0", 0, DAY_MS, OFF(busy_ms), "MS",
     "503 on /modules and /moduleResources for MS after the first request per tag "
     "(the reference workload uses 180000)"},
    {"extra-delay-ms", "DMI_STUB_EXTRA_DELAY_MS", OPT_LONG, "0", 0, DAY_MS, OFF(extra_delay_ms),
     "MS",
     "added to the delay of every /dmi/, /ProvMnS/ and action answer (for client timeout tests)"},
    {"hang", "DMI_STUB_HANG", OPT_FLAG, "0", 0, 1, OFF(hang), NULL,
     "never answer /dmi/, /ProvMnS/ and action requests (until stopped: then 503)"},
    {"policy-decision", "DMI_STUB_POLICY_DECISION", OPT_STR, "allow", 0, 0, OFF(policy_decision),
     "allow|deny",
     "permissionResult of POST /operation-permission/v1/permissions (without a "
     "policySimulation marker)"},
    {"policy-delay-ms", "DMI_STUB_POLICY_DELAY_MS", OPT_LONG, "0", 0, DAY_MS, OFF(policy_delay_ms),
     "MS", "delay of POST /operation-permission/v1/permissions"},
    {"health-down", "DMI_STUB_HEALTH_DOWN", OPT_FLAG, "0", 0, 1, OFF(health_down), NULL,
     "start with /actuator/health DOWN (POST /stub/health changes it)"},
    {"kafka", "KAFKA_BOOTSTRAP_SERVER", OPT_STR, "", 0, 0, OFF(kafka), "BOOTSTRAP",
     "Kafka brokers for batch reads and async pass-through; empty: those answer 503"},
    {"async-topic", "NCMP_ASYNC_M2M_TOPIC", OPT_STR, "ncmp-async-m2m", 0, 0, OFF(async_topic),
     "TOPIC", "topic of the DataOperationEvent results"},
    {"async-legacy", "DMI_STUB_ASYNC_LEGACY", OPT_FLAG, "0", 0, 1, OFF(async_legacy), NULL,
     "answer a pass-through with a topic as ONAP's DMI plugin does: a "
     "DmiAsyncRequestResponseEvent (plain JSON, no CloudEvent headers) on --async-topic"},
    {"kafka-prop", NULL, OPT_KV, "", 0, 0, OFF(kafka_props), "KEY=VALUE",
     "librdkafka producer property (repeatable), e.g. linger.ms=20"},
    {"bad-yang-tag", "DMI_STUB_BAD_YANG_TAGS", OPT_LIST, "", 0, 0, OFF(bad_yang_tags), "TAG",
     "module resources of TAG are invalid YANG (repeatable or comma-separated)"},
    {"garbage-tag", "DMI_STUB_GARBAGE_TAGS", OPT_LIST, "", 0, 0, OFF(garbage_tags), "TAG",
     "module resources of TAG answer 200 with a body that is not JSON"},
    {"error-tag", "DMI_STUB_ERROR_TAGS", OPT_LIST, "", 0, 0, OFF(error_tags), "TAG",
     "module resources of TAG answer HTTP 500"},
    {"data-model", "DMI_STUB_DATA_MODEL", OPT_STR, "", 0, 0, OFF(data_model), "PATH",
     "a .zip or directory of YANG modules: the module set of the --data-tag tags (the modules "
     "the --data-root module imports, directly or not)"},
    {"data-tree", "DMI_STUB_DATA_TREE", OPT_STR, "", 0, 0, OFF(data_tree), "FILE",
     "JSON of the data under --data-root, answered to a read with options=(fields=<root>)"},
    {"data-root", "DMI_STUB_DATA_ROOT", OPT_STR, "", 0, 0, OFF(data_root),
     "MODULE:CONTAINER[/LIST]",
     "where the tree goes: the top container, and the list the tree "
     "is one entry of"},
    {"data-tag", "DMI_STUB_DATA_TAGS", OPT_LIST, "", 0, 0, OFF(data_tags), "TAG",
     "module set tags whose module set is --data-model (repeatable); none given: every tag"},
    {"data-id-marker", "DMI_STUB_DATA_ID_MARKER", OPT_STR, "NODE_ID_HERE", 0, 0,
     OFF(data_id_marker), "TEXT", "text of the tree replaced by the handle id in each answer"},
    {"data-error-reads", "DMI_STUB_DATA_ERROR_READS", OPT_LONG, "0", 0, 1000000000,
     OFF(data_error_reads), "N", "the first N reads of a data root answer HTTP 500"},
    {"log-level", "DMI_STUB_LOG_LEVEL", OPT_STR, "info", 0, 0, OFF(log_level), "LEVEL",
     "error, warn, info, debug or trace"},
    {"avc-topic", "DMI_STUB_AVC_TOPIC", OPT_STR, "dmi-cm-events", 0, 0, OFF(avc_topic), "TOPIC",
     "topic of the AVC events of --avc-events"},
    {"avc-events", "DMI_STUB_AVC_EVENTS", OPT_LONG, "0", 0, 100000000L, OFF(avc_events), "N",
     "at start, publish N AVC events (ce_source ONAP-DMI-PLUGIN), round robin over --avc-handle, "
     "each patching the status leaf of the handle's Open ROADM device (device-id = handle id)"},
    {"avc-handle", "DMI_STUB_AVC_HANDLES", OPT_LIST, "", 0, 0, OFF(avc_handles), "ID",
     "CM handle of --avc-events (repeatable or comma-separated)"},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL},
};

static char **str_field(dmistub_opts *o, const opt_def *d)
{
    return (char **)((char *)o + d->offset);
}

static int parse_long(const opt_def *d, const char *text, long *out, ncmp_err *err)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--%s: '%s' is not an integer", d->name, text);
    if (v < d->min || v > d->max)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--%s: %ld is outside [%ld, %ld]", d->name, v,
                            d->min, d->max);
    *out = v;
    return 0;
}

static int parse_bool(const opt_def *d, const char *text, int *out, ncmp_err *err)
{
    if (!strcmp(text, "1") || !strcasecmp(text, "true") || !strcasecmp(text, "yes"))
        *out = 1;
    else if (!strcmp(text, "0") || !strcasecmp(text, "false") || !strcasecmp(text, "no") || !*text)
        *out = 0;
    else
        return ncmp_err_set(err, NCMP_ERR_FATAL, "%s: '%s' is not a boolean (1/0, true/false)",
                            d->env ? d->env : d->name, text);
    return 0;
}

/* Append `text` to the string field with separator `sep` (lists, kv). */
static void append_field(char **field, const char *text, char sep)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, *field ? *field : "");
    if (b.len && *text)
        ncmp_buf_append_char(&b, sep);
    ncmp_buf_append_str(&b, text);
    free(*field);
    *field = b.data ? b.data : ncmp_xstrdup("");
}

/* Apply one value. `append` is set for flags (lists and kv accumulate). */
static int opt_apply(dmistub_opts *o, const opt_def *d, const char *text, int append, ncmp_err *err)
{
    char **field = str_field(o, d);

    switch (d->type) {
    case OPT_STR:
        free(*field);
        *field = ncmp_xstrdup(text);
        return 0;
    case OPT_LONG:
        return parse_long(d, text, (long *)((char *)o + d->offset), err);
    case OPT_FLAG:
        return parse_bool(d, text, (int *)((char *)o + d->offset), err);
    case OPT_LIST:
        if (!append) {
            free(*field);
            *field = ncmp_xstrdup("");
        }
        append_field(field, text, ',');
        return 0;
    case OPT_KV:
        if (*text && (!strchr(text, '=') || *text == '='))
            return ncmp_err_set(err, NCMP_ERR_FATAL, "--%s: '%s' is not KEY=VALUE", d->name, text);
        append_field(field, text, '\n');
        return 0;
    }
    return 0;
}

static int load_defaults_and_env(dmistub_opts *o, char **envp, ncmp_err *err)
{
    for (const opt_def *d = opt_table; d->name; d++)
        if (opt_apply(o, d, d->def, 0, err) != 0)
            return -1;
    for (const opt_def *d = opt_table; d->name; d++) {
        const char *v = d->env ? ncmp_env_get(envp, d->env) : NULL;
        if (v && opt_apply(o, d, v, 0, err) != 0)
            return -1;
    }
    return 0;
}

static int load_argv(dmistub_opts *o, int argc, char **argv, ncmp_err *err)
{
    enum { N = sizeof(opt_table) / sizeof(opt_table[0]) };
    struct option longopts[N + 1];
    int n = 0, c;

    for (const opt_def *d = opt_table; d->name; d++, n++)
        longopts[n] = (struct option){
            d->name, d->type == OPT_FLAG ? no_argument : required_argument, NULL, 256 + n};
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            o->help = 1;
        } else if (c >= 256) {
            const opt_def *d = &opt_table[c - 256];
            if (opt_apply(o, d, d->type == OPT_FLAG ? "1" : optarg, 1, err) != 0)
                return -1;
        } else if (c == ':') {
            return ncmp_err_set(err, NCMP_ERR_FATAL, "option '%s' needs a value (see --help)",
                                argv[optind - 1]);
        } else {
            return ncmp_err_set(err, NCMP_ERR_FATAL, "unknown option '%s' (see --help)",
                                argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "unexpected argument '%s' (see --help)",
                            argv[optind]);
    return 0;
}

static int validate(const dmistub_opts *o, ncmp_err *err)
{
    if (ncmp_log_level_parse(o->log_level) < 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--log-level: unknown level '%s'", o->log_level);
    if (*o->auth && !strchr(o->auth, ':'))
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--auth: expected USER:PASSWORD");
    if (!*o->async_topic)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--async-topic: must not be empty");
    if (strcmp(o->policy_decision, "allow") != 0 && strcmp(o->policy_decision, "deny") != 0)
        return ncmp_err_set(err, NCMP_ERR_FATAL,
                            "--policy-decision: expected allow or deny, not '%s'",
                            o->policy_decision);
    if (!*o->host)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "--host: must not be empty");
    return 0;
}

int dmistub_opts_load(dmistub_opts **out, int argc, char **argv, char **envp, ncmp_err *err)
{
    dmistub_opts *o = ncmp_xcalloc(1, sizeof(*o));

    if (load_defaults_and_env(o, envp, err) != 0 || load_argv(o, argc, argv, err) != 0 ||
        (!o->help && validate(o, err) != 0)) {
        dmistub_opts_free(o);
        return -1;
    }
    *out = o;
    return 0;
}

void dmistub_opts_free(dmistub_opts *o)
{
    if (!o)
        return;
    for (const opt_def *d = opt_table; d->name; d++)
        if (d->type == OPT_STR || d->type == OPT_LIST || d->type == OPT_KV)
            free(*str_field(o, d));
    free(o);
}

void dmistub_opts_help(FILE *out)
{
    fputs("Usage: ncmp-dmi-stub [options]\n"
          "\n"
          "Serves NCMP's DMI plugin API and ProvMnS like ONAP's reference dmi-stub, with its\n"
          "delays, and the operation permission API like ONAP's policy executor stub.\n"
          "Flags win over environment variables, which win over the defaults.\n"
          "\n",
          out);
    for (const opt_def *d = opt_table; d->name; d++) {
        char flag[64];
        snprintf(flag, sizeof(flag), "--%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
        fprintf(out, "  %-36s %s\n", flag, d->help);
        const char *def = d->type == OPT_FLAG ? (strcmp(d->def, "1") ? "off" : "on")
                                              : (*d->def ? d->def : "none");
        fprintf(out, "  %-36s (default: %s%s%s)\n", "", def, d->env ? "; env " : "",
                d->env ? d->env : "");
    }
    fprintf(out, "  %-36s %s\n", "-h, --help", "this text");
}

int dmistub_opts_tag_in(const char *list, const char *tag)
{
    return tag && ncmp_list_has(list, ',', tag, strlen(tag));
}
