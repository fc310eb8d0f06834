#include "ncmp_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "ncmp_buf.h"

volatile ncmp_log_level ncmp_log_threshold = NCMP_LOG_INFO;

static ncmp_log_format log_format = NCMP_LOG_TEXT;
static FILE *log_out;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void ncmp_log_setup(ncmp_log_level level, ncmp_log_format format, FILE *out)
{
    pthread_mutex_lock(&log_lock);
    ncmp_log_threshold = level;
    log_format = format;
    log_out = out;
    pthread_mutex_unlock(&log_lock);
}

int ncmp_log_level_parse(const char *s)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
        if (s && strcmp(s, level_names[i]) == 0)
            return (int)i;
    return -1;
}

const char *ncmp_log_level_name(ncmp_log_level level)
{
    if ((int)level < 0 || (size_t)level >= sizeof(level_names) / sizeof(level_names[0]))
        return "?";
    return level_names[level];
}

int ncmp_log_format_parse(const char *s)
{
    if (s && strcmp(s, "text") == 0)
        return NCMP_LOG_TEXT;
    if (s && strcmp(s, "json") == 0)
        return NCMP_LOG_JSON;
    return -1;
}

ncmp_log_level ncmp_log_level_from_syslog(int syslog_level)
{
    if (syslog_level <= 3)
        return NCMP_LOG_ERROR;
    if (syslog_level == 4)
        return NCMP_LOG_WARN;
    if (syslog_level <= 6)
        return NCMP_LOG_INFO;
    return NCMP_LOG_DEBUG;
}

void ncmp_log_write(ncmp_log_level level, const char *component, const char *fmt, ...)
{
    char msg[4096];
    char ts[64];
    struct timeval tv;
    struct tm tm;
    ncmp_buf line = NCMP_BUF_INIT;
    va_list ap;
    FILE *out;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000));

    if (log_format == NCMP_LOG_JSON) {
        ncmp_buf_appendf(&line, "{\"ts\":\"%s\",\"level\":\"%s\",\"component\":", ts,
                         ncmp_log_level_name(level));
        ncmp_buf_append_json_string(&line, component ? component : "");
        ncmp_buf_append_str(&line, ",\"msg\":");
        ncmp_buf_append_json_string(&line, msg);
        ncmp_buf_append_str(&line, "}\n");
    } else {
        ncmp_buf_appendf(&line, "%s %-5s [%s] %s\n", ts, ncmp_log_level_name(level),
                         component ? component : "-", msg);
    }

    pthread_mutex_lock(&log_lock);
    out = log_out ? log_out : stderr;
    if (line.data)
        fwrite(line.data, 1, line.len, out);
    fflush(out);
    pthread_mutex_unlock(&log_lock);
    ncmp_buf_free(&line);
}
