/* SPDX-License-Identifier: BSD-2-Clause */
/* The sink interface shared by the formats. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "util/out-buffer.h"
#include "convert.h"

static const char *const format_names[] = { "ctf", "perfetto", "ftrace",
                                            "json" };

int fr_format_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, format_names[i]) == 0)
            return i;
    if (strcmp(name, "pftrace") == 0 || strcmp(name, "proto") == 0)
        return FR_FORMAT_PERFETTO;
    return -1;
}

const char *fr_format_name(int format)
{
    return format >= 0 && format < 4 ? format_names[format] : "?";
}

int fr_sink_create(struct fr_sink **out, int format, const char *path,
                   char *err, size_t err_size)
{
    switch (format) {
    case FR_FORMAT_CTF:
        return fr_ctf_create(out, path, err, err_size);
    case FR_FORMAT_PERFETTO:
        return fr_perfetto_create(out, path, err, err_size);
    case FR_FORMAT_FTRACE:
        return fr_ftrace_create(out, path, err, err_size);
    case FR_FORMAT_JSON:
        return fr_json_create(out, path, err, err_size);
    default:
        fr_errorf(err, err_size, "unknown output format");
        return -1;
    }
}

int fr_sink_begin(struct fr_sink *sink, const struct fr_source *src)
{
    sink->src = src;
    /* RTEMS rings are processors and their records describe a kernel;
     * flightrec rings are user-space threads. */
    sink->kernel = src->info->kind != FLIGHTREC_STREAM_FLIGHTREC;
    return sink->ops->begin(sink);
}

int fr_sink_record(struct fr_sink *sink, const struct flightrec_record *rec)
{
    if (rec->type == FLIGHTREC_RECORD_EVENT &&
        (rec->flags & FLIGHTREC_RECORD_UNTIMED) != 0) {
        sink->untimed++;
        return 0;
    }
    return sink->ops->record(sink, rec);
}

int fr_sink_end(struct fr_sink *sink)
{
    return sink->ops->end(sink);
}

void fr_sink_destroy(struct fr_sink *sink)
{
    if (sink != NULL)
        sink->ops->destroy(sink);
}

int fr_sink_reset(struct fr_sink *sink)
{
    sink->untimed = 0;
    sink->half_switches = 0;
    sink->needs_time_order = 0;
    sink->error[0] = '\0';
    return sink->ops->reset != NULL ? sink->ops->reset(sink) : 0;
}
