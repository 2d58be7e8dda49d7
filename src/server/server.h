/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The record server (docs/format.md section 10): serves the rings of one
 * or more regions to many TCP clients at once.  Used by `flightrec serve`
 * (regions of other processes, mapped from their session files) and by the
 * in-process server thread of the recording runtime (its own region); it
 * needs the region reader and libc only, no decoder.
 *
 * The server is the one consumer of each region: it drains the rings and
 * fans the stream out in whole units (the header, name records, chunks)
 * into a bounded queue per client.  A client whose queue is full loses
 * whole chunks; in their place it gets, before its next chunk of that ring
 * and at the end of the stream, an empty chunk at the position the lost
 * ones reached, so that its decoder counts exactly what it missed.  The
 * header and the name records are never dropped.  A client that connects
 * late gets the header, the names and what the rings still hold of what
 * was drained, then the live chunks.
 *
 * One thread drives a server: fr_server_poll() and fr_server_drain() in a
 * loop.  Nothing blocks: sockets are non-blocking and a short write is
 * kept for the next poll.
 */
#ifndef FLIGHTREC_SERVER_H
#define FLIGHTREC_SERVER_H

#include <flightrec/region.h>

#include <stddef.h>
#include <stdint.h>

/* The port `flightrec serve` and FLIGHTREC_SERVER listen on by default. */
#define FR_SERVER_DEFAULT_PORT 6725u

struct fr_server_options {
    const char *address;    /* numeric IPv4 or IPv6 address to bind */
    unsigned port;          /* 0: any free port (fr_server_port()) */
    const char *token;      /* NULL or "": none required */
    unsigned max_clients;   /* 0: 16 */
    size_t queue_bytes;     /* per client; 0: 4 MiB */
    unsigned request_ms;    /* wait for a client's request; 0: 2000 */
    /* After the end of a region's stream, how long its clients may take
     * to read what is queued for them; 0: 10000. */
    unsigned end_grace_ms;
    /* Messages for the operator (refused clients), without newline. */
    void (*log)(void *arg, const char *message);
    void *log_arg;
};

/* How the server reads one region. */
struct fr_source_ops {
    /* The region's current mapping into *base (it may move when the file
     * grew); 0, or -1 when it cannot be read any more. */
    int (*refresh)(void *ctx, unsigned char **base);
    /* Whether the program that writes the region still runs. */
    int (*alive)(void *ctx);
    /* The current name of a live ring's thread into @words, or NULL to
     * use the stored one.  May be NULL. */
    const uint32_t *(*thread_name)(void *ctx,
                                   const struct flightrec_region_ring *ring,
                                   uint32_t words[4]);
    /* Called after each ring was drained (the runtime recycles rings of
     * exited threads then).  May be NULL. */
    void (*ring_read)(void *ctx, struct flightrec_region_ring *ring);
    /* The counter frequency for the stream header. */
    uint64_t (*frequency)(void *ctx);
    /* The region is served no more (its clients got the end of stream).
     * May be NULL. */
    void (*ended)(void *ctx);
};

struct fr_server;

/* Binds and listens.  0, or -1 with a message. */
int fr_server_open(struct fr_server **out,
                   const struct fr_server_options *options, char *message,
                   size_t message_size);
/* The port it listens on. */
unsigned fr_server_port(const struct fr_server *server);

/* Serves the region of process @pid, read through @ops.  0 or -1 (no
 * memory). */
int fr_server_add(struct fr_server *server, int32_t pid,
                  const struct fr_source_ops *ops, void *ctx);
/* Whether the region of @pid is served. */
int fr_server_serves(const struct fr_server *server, int32_t pid);
/* Regions served now. */
size_t fr_server_source_count(const struct fr_server *server);

/* Network work (accepting, requests, writing) for up to @timeout_ms. */
void fr_server_poll(struct fr_server *server, unsigned timeout_ms);
/* Drains every region and queues what is new to its clients; a region
 * whose program ended is drained one last time and its clients get the
 * end of stream. */
void fr_server_drain(struct fr_server *server);

/* Ends the service: a last drain, the end of stream to every client, at
 * most @grace_ms for them to take what is queued, then every connection
 * closes. */
void fr_server_finish(struct fr_server *server, unsigned grace_ms);
/* Closes everything (without the end of stream if not finished). */
void fr_server_close(struct fr_server *server);

/* Client statistics for the operator and tests. */
struct fr_server_stats {
    uint64_t accepted, refused, clients;
    uint64_t chunks_dropped;    /* whole chunks left out for slow clients */
    uint64_t bytes_sent;
};
void fr_server_stats(const struct fr_server *server,
                     struct fr_server_stats *stats);

/* "ADDR:PORT", "[ADDR6]:PORT", "ADDR" (default port) or ":PORT" (default
 * address 127.0.0.1) into @address (at least 64 bytes) and *port.  0 or
 * -1. */
int fr_server_parse_address(const char *text, char *address, size_t size,
                            unsigned *port);
/* Whether @address is a loopback address. */
int fr_server_is_loopback(const char *address);

#endif
