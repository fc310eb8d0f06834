/*
 * ncmp_log: one logger for the process.
 *
 * Levels are checked before anything is formatted (NCMP_LOG is a macro for
 * that reason). Each line carries a component ("registration", "rdkafka",
 * "db") and whatever context the caller puts in the message, by convention
 * as key=value pairs such as topic=, partition=, offset=, handle=.
 * Two formats: human text (default) and JSON lines. Safe to call from any
 * thread: a line is written whole under a lock.
 */
#ifndef NCMP_LOG_H
#define NCMP_LOG_H

#include <stdio.h>

typedef enum ncmp_log_level {
    NCMP_LOG_ERROR = 0,
    NCMP_LOG_WARN,
    NCMP_LOG_INFO,
    NCMP_LOG_DEBUG,
    NCMP_LOG_TRACE,
} ncmp_log_level;

typedef enum ncmp_log_format {
    NCMP_LOG_TEXT = 0,
    NCMP_LOG_JSON,
} ncmp_log_format;

/* The current threshold; read without a lock (a torn read is harmless). */
extern volatile ncmp_log_level ncmp_log_threshold;

/* Configure the logger. `out` defaults to stderr; it is not owned. */
void ncmp_log_setup(ncmp_log_level level, ncmp_log_format format, FILE *out);

/* Parse "error", "warn", "info", "debug", "trace"; -1 when unknown. */
int ncmp_log_level_parse(const char *s);
const char *ncmp_log_level_name(ncmp_log_level level);
/* Parse "text" or "json"; -1 when unknown. */
int ncmp_log_format_parse(const char *s);

void ncmp_log_write(ncmp_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define NCMP_LOG(level, component, ...)                                                            \
    do {                                                                                           \
        if ((level) <= ncmp_log_threshold)                                                         \
            ncmp_log_write((level), (component), __VA_ARGS__);                                     \
    } while (0)

#define log_error(comp, ...) NCMP_LOG(NCMP_LOG_ERROR, comp, __VA_ARGS__)
#define log_warn(comp, ...)  NCMP_LOG(NCMP_LOG_WARN, comp, __VA_ARGS__)
#define log_info(comp, ...)  NCMP_LOG(NCMP_LOG_INFO, comp, __VA_ARGS__)
#define log_debug(comp, ...) NCMP_LOG(NCMP_LOG_DEBUG, comp, __VA_ARGS__)
#define log_trace(comp, ...) NCMP_LOG(NCMP_LOG_TRACE, comp, __VA_ARGS__)

/* Map a syslog severity (librdkafka's log callback) to our level. */
ncmp_log_level ncmp_log_level_from_syslog(int syslog_level);

#endif
