/*
 * bench_usage: --help for the benchmark clients that `./run bench` runs.
 * Each client keeps its usage text in one string, printed on stdout with
 * status 0 when asked for and on stderr with status 2 after bad
 * arguments.
 */
#ifndef BENCH_USAGE_H
#define BENCH_USAGE_H

#include <stdio.h>
#include <string.h>

/* 1 when an argument is --help or -h (before any other parsing, so that
 * neither getopt nor a command word sees it). */
static inline int bench_help_asked(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

/* The usage text on stdout (asked for: returns 0) or stderr (returns 2). */
static inline int bench_usage(const char *text, int asked)
{
    fputs(text, asked ? stdout : stderr);
    return asked ? 0 : 2;
}

#endif
