/* SPDX-License-Identifier: BSD-2-Clause */
#include "server.h"

#include "../region/ring-reader.h"
#include "../region/stream-writer.h"

#include <flightrec/events.h>
#include <flightrec/format.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define ITEM_SIZE (4 + sizeof(uintptr_t))
#define REQUEST_MAX 1024u
#define LINGER_MS 1000u
#define WRITE_IOVECS 64
/* Kept units (header, names, position markers) may pass the queue bound
 * up to this many times it; a client that lets them pile up further is
 * closed. */
#define KEEP_FACTOR 4u
#define COLLECT_BUFFER (64u << 10)
#define SEND_BUFFER (1 << 20)

/*=====   Units   =====*/

enum unit_kind { UNIT_KEEP, UNIT_CHUNK };

/* The identity and end of a chunk, for the empty chunk that stands for it
 * when a client loses it. */
struct chunk_facts {
    uint32_t ring_id;
    int32_t tid;
    uint32_t name[FLIGHTREC_REGION_NAME_WORDS];
    uint32_t context;
    uint32_t end_events;        /* RING_POSITION + its events */
    uintptr_t overflow, discard;
};

struct unit {
    unsigned refs;
    enum unit_kind kind;
    struct chunk_facts facts;   /* UNIT_CHUNK */
    size_t len;
    unsigned char bytes[];
};

static struct unit *unit_new(enum unit_kind kind, const void *bytes, size_t len)
{
    struct unit *u = malloc(sizeof(*u) + len);
    if (u == NULL)
        return NULL;
    memset(u, 0, sizeof(*u));
    u->refs = 1;
    u->kind = kind;
    u->len = len;
    memcpy(u->bytes, bytes, len);
    return u;
}

static void unit_put(struct unit *u)
{
    if (u != NULL && --u->refs == 0)
        free(u);
}

/*=====   Collecting what the ring reader writes   =====*/

struct collect {
    unsigned char *bytes;
    size_t len, cap;
    int failed;
};

static ssize_t collect_write(void *target, const void *bytes, size_t n)
{
    struct collect *c = target;
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        unsigned char *grown = realloc(c->bytes, cap);
        if (grown == NULL) {
            c->failed = 1;
            return -ENOMEM;
        }
        c->bytes = grown;
        c->cap = cap;
    }
    memcpy(c->bytes + c->len, bytes, n);
    c->len += n;
    return (ssize_t)n;
}

static uint32_t item_event(const unsigned char *item)
{
    uint32_t word;
    memcpy(&word, item, 4);
    return FLIGHTREC_GET_EVENT(word);
}

static uintptr_t item_data(const unsigned char *item)
{
    uintptr_t data;
    memcpy(&data, item + 4, sizeof(data));
    return data;
}

/* The facts of the chunk at @bytes (a chunk head as put_chunk_head()
 * writes it, then items). */
static void chunk_facts_of(const unsigned char *bytes, size_t len,
                           struct chunk_facts *f)
{
    memset(f, 0, sizeof(*f));
    size_t at = 0, name_items = 0;
    uint32_t position = 0;
    uintptr_t events = 0;
    int in_head = 1;
    for (; at + ITEM_SIZE <= len; at += ITEM_SIZE) {
        const unsigned char *item = bytes + at;
        uint32_t id = item_event(item);
        uintptr_t data = item_data(item);
        if (in_head) {
            switch (id) {
            case FLIGHTREC_EV_PROCESSOR:
                f->ring_id = (uint32_t)data;
                continue;
            case FLIGHTREC_EV_THREAD_ID:
                f->tid = (int32_t)data;
                continue;
            case FLIGHTREC_EV_THREAD_NAME: {
                size_t per = sizeof(uintptr_t) / 4;
                for (size_t w = 0; w < per; w++) {
                    size_t index = name_items * per + w;
                    if (index < FLIGHTREC_REGION_NAME_WORDS)
                        f->name[index] = (uint32_t)(data >> (32 * w));
                }
                name_items++;
                continue;
            }
            case FLIGHTREC_EV_RING_CONTEXT:
                f->context = (uint32_t)data;
                continue;
            case FLIGHTREC_EV_RING_POSITION:
                position = (uint32_t)data;
                continue;
            case FLIGHTREC_EV_PER_CPU_OVERFLOW:
                f->overflow = data;
                continue;
            case FLIGHTREC_EV_PER_CPU_DISCARD:
                f->discard = data;
                in_head = 0;
                continue;
            default:
                in_head = 0;
                break;
            }
        }
        if (id != FLIGHTREC_EV_UPTIME_LOW && id != FLIGHTREC_EV_UPTIME_HIGH)
            events++;
    }
    f->end_events = position + (uint32_t)events;
}

/* The bytes of an empty chunk that stands for lost ones. */
static size_t marker_bytes(const struct chunk_facts *f, unsigned char *out)
{
    size_t n = 0;
    unsigned char *p = out;
#define PUT(event, data)                                                   \
    do {                                                                   \
        uint32_t word_ = FLIGHTREC_TIME_EVENT(0, (event));                 \
        uintptr_t data_ = (uintptr_t)(data);                               \
        memcpy(p + n, &word_, 4);                                          \
        memcpy(p + n + 4, &data_, sizeof(data_));                          \
        n += ITEM_SIZE;                                                    \
    } while (0)
    PUT(FLIGHTREC_EV_PROCESSOR, f->ring_id);
    PUT(FLIGHTREC_EV_THREAD_ID, (uint32_t)f->tid);
    size_t per = sizeof(uintptr_t) / 4;
    for (size_t i = 0; i < FLIGHTREC_REGION_NAME_WORDS; i += per) {
        uintptr_t data = f->name[i];
#if UINTPTR_MAX > UINT32_MAX
        data |= (uintptr_t)f->name[i + 1] << 32;
#endif
        PUT(FLIGHTREC_EV_THREAD_NAME, data);
    }
    PUT(FLIGHTREC_EV_RING_CONTEXT, f->context);
    PUT(FLIGHTREC_EV_RING_POSITION, f->end_events);
    if (f->overflow != 0)
        PUT(FLIGHTREC_EV_PER_CPU_OVERFLOW, f->overflow);
    if (f->discard != 0)
        PUT(FLIGHTREC_EV_PER_CPU_DISCARD, f->discard);
#undef PUT
    return n;
}

/*=====   Clients and sources   =====*/

enum client_state {
    CLIENT_REQUEST,     /* waiting for the request lines */
    CLIENT_STREAMING,
    CLIENT_CLOSING,     /* sends what is queued, then closes */
    CLIENT_LINGER,      /* sent everything, waits for the peer to close */
};

struct marker {
    int pending;
    struct chunk_facts facts;
};

struct source;

struct client {
    int fd;
    enum client_state state;
    char peer[80];
    uint64_t deadline_ms;
    char request[REQUEST_MAX];
    size_t request_len;
    struct source *source;
    struct unit **queue;
    size_t queue_cap, queue_first, queue_count;
    size_t queued_bytes, sent_of_first;
    struct marker *markers;     /* by ring id */
    size_t marker_count;
    int failed;                 /* out of memory or kept units piled up */
};

struct source {
    int32_t pid;
    const struct fr_source_ops *ops;
    void *ctx;
    unsigned char *base;
    uint32_t seen[FLIGHTREC_EVENT_COUNT];
    int ended;
};

struct fr_server {
    struct fr_server_options options;
    int listen_fd;
    unsigned port;
    char token[256];
    size_t token_len;
    struct client **clients;
    size_t client_count, client_cap;
    struct source **sources;
    size_t source_count, source_cap;
    struct collect collect;
    unsigned char sink_buffer[COLLECT_BUFFER];
    struct fr_server_stats stats;
    int finishing;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* "PEER: WHAT WHY" to the operator. */
static void say(struct fr_server *s, const char *peer, const char *what,
                const char *why)
{
    if (s->options.log == NULL)
        return;
    char line[400];
    snprintf(line, sizeof(line), "%s: %s%s", peer, what, why);
    s->options.log(s->options.log_arg, line);
}

/* Queues @u (a reference is taken) at the back. */
static int queue_push(struct client *c, struct unit *u)
{
    if (c->queue_count == c->queue_cap) {
        size_t cap = c->queue_cap ? c->queue_cap * 2 : 64;
        struct unit **grown = malloc(cap * sizeof(*grown));
        if (grown == NULL) {
            c->failed = 1;
            return -1;
        }
        for (size_t i = 0; i < c->queue_count; i++)
            grown[i] = c->queue[(c->queue_first + i) % c->queue_cap];
        free(c->queue);
        c->queue = grown;
        c->queue_cap = cap;
        c->queue_first = 0;
    }
    c->queue[(c->queue_first + c->queue_count) % c->queue_cap] = u;
    c->queue_count++;
    c->queued_bytes += u->len;
    u->refs++;
    return 0;
}

static struct marker *marker_of(struct client *c, uint32_t ring_id)
{
    if (ring_id >= c->marker_count) {
        size_t count = c->marker_count ? c->marker_count : 16;
        while (count <= ring_id)
            count *= 2;
        if (count > (1u << 20))
            return NULL;
        struct marker *grown = realloc(c->markers, count * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        memset(grown + c->marker_count, 0,
               (count - c->marker_count) * sizeof(*grown));
        c->markers = grown;
        c->marker_count = count;
    }
    return &c->markers[ring_id];
}

static int queue_bytes(struct client *c, enum unit_kind kind,
                       const void *bytes, size_t len)
{
    struct unit *u = unit_new(kind, bytes, len);
    if (u == NULL) {
        c->failed = 1;
        return -1;
    }
    int rc = queue_push(c, u);
    unit_put(u);
    return rc;
}

/* Queues the empty chunk that stands for the chunks @c lost of ring @m. */
static void flush_marker(struct client *c, struct marker *m)
{
    if (!m->pending)
        return;
    unsigned char bytes[16 * 16];
    size_t n = marker_bytes(&m->facts, bytes);
    if (queue_bytes(c, UNIT_KEEP, bytes, n) == 0)
        m->pending = 0;
}

static void offer_keep(struct fr_server *s, struct client *c, struct unit *u)
{
    if (c->queued_bytes + u->len > KEEP_FACTOR * s->options.queue_bytes &&
        c->queue_count != 0) {
        c->failed = 1;
        return;
    }
    (void)queue_push(c, u);
}

/* A chunk for @c: queued if there is room, else lost as a whole and
 * accounted in the ring's marker. */
static void offer_chunk(struct fr_server *s, struct client *c, struct unit *u)
{
    struct marker *m = marker_of(c, u->facts.ring_id);
    if (m == NULL) {
        c->failed = 1;
        return;
    }
    int room = c->queue_count == 0 ||
               c->queued_bytes + u->len <= s->options.queue_bytes;
    if (room) {
        flush_marker(c, m);
        (void)queue_push(c, u);
        return;
    }
    s->stats.chunks_dropped++;
    const struct chunk_facts *f = &u->facts;
    if (m->pending && m->facts.tid == f->tid &&
        m->facts.context == f->context) {
        /* The same owner lost more: one marker says it all. */
        m->facts.end_events = f->end_events;
        m->facts.overflow += f->overflow;
        m->facts.discard += f->discard;
        memcpy(m->facts.name, f->name, sizeof(f->name));
        return;
    }
    /* Another owner: the marker of the previous one goes first. */
    flush_marker(c, m);
    m->pending = 1;
    m->facts = *f;
}

static void offer(struct fr_server *s, struct client *c, struct unit *u)
{
    if (u->kind == UNIT_CHUNK)
        offer_chunk(s, c, u);
    else
        offer_keep(s, c, u);
}

/* Splits what was collected into units (a chunk starts at PROCESSOR, a
 * name record at EVENT_NAME_ID) and offers them to the clients of @src,
 * or to @only. */
static void fan_out(struct fr_server *s, struct source *src,
                    struct client *only)
{
    const unsigned char *b = s->collect.bytes;
    size_t len = s->collect.len - s->collect.len % ITEM_SIZE;
    size_t at = 0;
    while (at < len) {
        size_t end = at + ITEM_SIZE;
        while (end < len) {
            uint32_t id = item_event(b + end);
            if (id == FLIGHTREC_EV_PROCESSOR || id == FLIGHTREC_EV_EVENT_NAME_ID)
                break;
            end += ITEM_SIZE;
        }
        int chunk = item_event(b + at) == FLIGHTREC_EV_PROCESSOR;
        struct unit *u = unit_new(chunk ? UNIT_CHUNK : UNIT_KEEP, b + at,
                                  end - at);
        if (u == NULL) {
            for (size_t i = 0; i < s->client_count; i++)
                if (s->clients[i]->source == src)
                    s->clients[i]->failed = 1;
            break;
        }
        if (chunk)
            chunk_facts_of(u->bytes, u->len, &u->facts);
        if (only != NULL) {
            offer(s, only, u);
        } else {
            for (size_t i = 0; i < s->client_count; i++) {
                struct client *c = s->clients[i];
                if (c->source == src && c->state == CLIENT_STREAMING)
                    offer(s, c, u);
            }
        }
        unit_put(u);
        at = end;
    }
    s->collect.len = 0;
}

static struct frw_sink collect_sink(struct fr_server *s)
{
    struct frw_sink sink;
    s->collect.len = 0;
    s->collect.failed = 0;
    frw_sink_init(&sink, collect_write, &s->collect, s->sink_buffer,
                  sizeof(s->sink_buffer));
    return sink;
}

static const struct flightrec_region_header *header_of(const unsigned char *b)
{
    return (const void *)b;
}

static struct flightrec_region_ring *ring_at(unsigned char *b, uint64_t at)
{
    return at == 0 ? NULL : (void *)(b + at);
}

/* Calls @fn for each ring of @src, walking the list as `flightrec stream`
 * does: a damaged link ends the walk. */
static void for_each_ring(struct source *src,
                          void (*fn)(struct fr_server *, struct source *,
                                     struct flightrec_region_ring *, void *),
                          struct fr_server *s, void *arg)
{
    const struct flightrec_region_header *h = header_of(src->base);
    uint32_t count = atomic_load(&h->ring_count);
    uint64_t at = atomic_load(&h->ring_list);
    for (uint32_t n = 0; at != 0 && n <= count + 1024; n++) {
        struct flightrec_region_ring *r = ring_at(src->base, at);
        at = atomic_load(&r->next_offset);
        if (at != 0 && (at % FLIGHTREC_REGION_ALIGN != 0 ||
                        at + sizeof(*r) > atomic_load(&h->used)))
            at = 0;
        if (atomic_load(&r->state) == FLIGHTREC_RING_FREE)
            continue;
        fn(s, src, r, arg);
    }
}

static const uint32_t *name_of(struct source *src,
                               const struct flightrec_region_ring *r,
                               uint32_t words[4])
{
    if (src->ops->thread_name == NULL ||
        atomic_load(&r->state) != FLIGHTREC_RING_LIVE)
        return NULL;
    return src->ops->thread_name(src->ctx, r, words);
}

/*=====   A new client's start   =====*/

static void dump_ring(struct fr_server *s, struct source *src,
                      struct flightrec_region_ring *r, void *arg)
{
    struct client *c = arg;
    struct frw_sink sink = collect_sink(s);
    uint32_t words[4];
    (void)fr_ring_dump_read(&sink, src->base, r, name_of(src, r, words));
    (void)frw_sink_flush(&sink);
    fan_out(s, src, c);
}

/* The header, every name, and what the rings hold of what was drained. */
static void start_stream(struct fr_server *s, struct client *c)
{
    struct source *src = c->source;
    c->state = CLIENT_STREAMING;
    struct frw_sink sink = collect_sink(s);
    /* The header's facts, field by field: the owner changes the atomic
     * ones meanwhile (new rings). */
    const struct flightrec_region_header *h = header_of(src->base);
    struct flightrec_region_header facts;
    memset(&facts, 0, sizeof(facts));
    atomic_store(&facts.ring_count, atomic_load(&h->ring_count));
    atomic_store(&facts.counter_frequency, src->ops->frequency(src->ctx));
    facts.process_id = h->process_id;
    facts.realtime_ns = h->realtime_ns;
    frw_put_header(&sink, &facts,
                   (const void *)(src->base + h->control_offset));
    frw_put_event_names(&sink, (const void *)(src->base + h->names_offset),
                        NULL);
    (void)frw_sink_flush(&sink);
    (void)queue_bytes(c, UNIT_KEEP, s->collect.bytes, s->collect.len);
    s->collect.len = 0;
    for_each_ring(src, dump_ring, s, c);
}

/* The end of stream: markers of what was lost, then STREAM_END. */
static void end_stream(struct client *c)
{
    for (size_t i = 0; i < c->marker_count; i++)
        flush_marker(c, &c->markers[i]);
    unsigned char item[ITEM_SIZE];
    uint32_t word = FLIGHTREC_TIME_EVENT(0, FLIGHTREC_EV_STREAM_END);
    uintptr_t zero = 0;
    memcpy(item, &word, 4);
    memcpy(item + 4, &zero, sizeof(zero));
    (void)queue_bytes(c, UNIT_KEEP, item, sizeof(item));
    c->state = CLIENT_CLOSING;
}

/* Refuses @c with one line "flightrec: WHY". */
static void refuse(struct fr_server *s, struct client *c, const char *why)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "flightrec: %s\n", why);
    (void)queue_bytes(c, UNIT_KEEP, line, (size_t)n);
    c->state = CLIENT_CLOSING;
    c->deadline_ms = now_ms() + LINGER_MS;
    s->stats.refused++;
    say(s, c->peer, "refused: ", why);
}

static int token_matches(const struct fr_server *s, const char *given,
                         size_t len)
{
    /* Constant time in the token: every byte is compared. */
    unsigned char diff = (unsigned char)(len != s->token_len);
    for (size_t i = 0; i < s->token_len; i++)
        diff |= (unsigned char)(s->token[i] ^ (i < len ? given[i] : 0));
    return diff == 0;
}

static void close_client(struct fr_server *s, size_t index);

static struct source *source_of_pid(struct fr_server *s, int32_t pid)
{
    for (size_t i = 0; i < s->source_count; i++)
        if (s->sources[i]->pid == pid && !s->sources[i]->ended)
            return s->sources[i];
    return NULL;
}

static size_t live_sources(const struct fr_server *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->source_count; i++)
        n += !s->sources[i]->ended;
    return n;
}

/* The request is complete (or its time is up): decide.  Returns -1 when
 * the client is to be closed at once. */
static int settle_request(struct fr_server *s, struct client *c)
{
    const char *token = NULL;
    size_t token_len = 0;
    long pid = 0;
    int pid_given = 0, pid_bad = 0;
    char *p = c->request, *end = c->request + c->request_len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        size_t n = (size_t)(nl - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n == 0)
            break;
        if (n > 6 && memcmp(p, "token ", 6) == 0) {
            token = p + 6;
            token_len = n - 6;
        } else if (n > 4 && memcmp(p, "pid ", 4) == 0) {
            pid_given = 1;
            pid = 0;
            for (size_t i = 4; i < n; i++) {
                if (p[i] < '0' || p[i] > '9' || pid > 100000000L) {
                    pid_bad = 1;
                    break;
                }
                pid = pid * 10 + (p[i] - '0');
            }
        }
        p = nl + 1;
    }
    if (s->token_len != 0 &&
        (token == NULL || !token_matches(s, token, token_len))) {
        s->stats.refused++;
        say(s, c->peer, token == NULL ? "missing" : "wrong",
            " token: connection closed");
        return -1;
    }
    if (pid_given) {
        c->source = pid_bad ? NULL : source_of_pid(s, (int32_t)pid);
        if (c->source == NULL) {
            refuse(s, c, "no session of that process is served");
            return 0;
        }
    } else if (live_sources(s) == 1) {
        c->source = NULL;
        for (size_t i = 0; i < s->source_count; i++)
            if (!s->sources[i]->ended)
                c->source = s->sources[i];
    } else {
        refuse(s, c, live_sources(s) == 0
                         ? "no session is served"
                         : "several sessions are served: send 'pid PID'");
        return 0;
    }
    start_stream(s, c);
    return 0;
}

/*=====   Opening   =====*/

int fr_server_parse_address(const char *text, char *address, size_t size,
                            unsigned *port)
{
    *port = FR_SERVER_DEFAULT_PORT;
    const char *colon = NULL, *host = text;
    size_t host_len;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL)
            return -1;
        host = text + 1;
        host_len = (size_t)(close - host);
        if (close[1] == ':')
            colon = close + 1;
        else if (close[1] != '\0')
            return -1;
    } else {
        colon = strrchr(text, ':');
        if (colon != NULL && strchr(text, ':') != colon)
            colon = NULL; /* a bare IPv6 address */
        host_len = colon ? (size_t)(colon - text) : strlen(text);
    }
    if (colon != NULL) {
        char *end;
        errno = 0;
        unsigned long value = strtoul(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end != '\0' || errno != 0 || value > 65535)
            return -1;
        *port = (unsigned)value;
    }
    if (host_len == 0) {
        host = "127.0.0.1";
        host_len = strlen(host);
    }
    if (host_len + 1 > size)
        return -1;
    memcpy(address, host, host_len);
    address[host_len] = '\0';
    unsigned char probe[16];
    if (inet_pton(AF_INET, address, probe) != 1 &&
        inet_pton(AF_INET6, address, probe) != 1)
        return -1;
    return 0;
}

int fr_server_is_loopback(const char *address)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, address, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, address, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return 0;
}

static int fail(char *message, size_t size, const char *what, int err)
{
    if (message != NULL)
        snprintf(message, size, "%s: %s", what, strerror(err));
    return -1;
}

int fr_server_open(struct fr_server **out,
                   const struct fr_server_options *options, char *message,
                   size_t message_size)
{
    struct fr_server *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return fail(message, message_size, "server", ENOMEM);
    s->options = *options;
    if (s->options.max_clients == 0)
        s->options.max_clients = 16;
    if (s->options.queue_bytes == 0)
        s->options.queue_bytes = 4u << 20;
    if (s->options.request_ms == 0)
        s->options.request_ms = 2000;
    if (s->options.end_grace_ms == 0)
        s->options.end_grace_ms = 10000;
    if (options->token != NULL) {
        s->token_len = strlen(options->token);
        if (s->token_len >= sizeof(s->token)) {
            free(s);
            if (message != NULL)
                snprintf(message, message_size,
                         "the token is longer than %zu bytes",
                         sizeof(s->token) - 1);
            return -1;
        }
        memcpy(s->token, options->token, s->token_len);
    }
    struct sockaddr_storage addr;
    socklen_t addr_len;
    memset(&addr, 0, sizeof(addr));
    struct sockaddr_in *v4 = (struct sockaddr_in *)&addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&addr;
    if (inet_pton(AF_INET, options->address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)options->port);
        addr_len = sizeof(*v4);
    } else if (inet_pton(AF_INET6, options->address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)options->port);
        addr_len = sizeof(*v6);
    } else {
        free(s);
        if (message != NULL)
            snprintf(message, message_size, "'%s' is not a numeric address",
                     options->address);
        return -1;
    }
    s->listen_fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
                                              SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0) {
        int e = errno;
        free(s);
        return fail(message, message_size, "socket", e);
    }
    int one = 1;
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->listen_fd, (struct sockaddr *)&addr, addr_len) != 0 ||
        listen(s->listen_fd, 64) != 0) {
        int e = errno;
        close(s->listen_fd);
        free(s);
        char what[120];
        snprintf(what, sizeof(what), "cannot listen on %s port %u",
                 options->address, options->port);
        return fail(message, message_size, what, e);
    }
    addr_len = sizeof(addr);
    getsockname(s->listen_fd, (struct sockaddr *)&addr, &addr_len);
    s->port = ntohs(addr.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    s->options.token = NULL;
    *out = s;
    return 0;
}

unsigned fr_server_port(const struct fr_server *server)
{
    return server->port;
}

int fr_server_add(struct fr_server *s, int32_t pid,
                  const struct fr_source_ops *ops, void *ctx)
{
    if (s->source_count == s->source_cap) {
        size_t cap = s->source_cap ? s->source_cap * 2 : 8;
        struct source **grown = realloc(s->sources, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        s->sources = grown;
        s->source_cap = cap;
    }
    struct source *src = calloc(1, sizeof(*src));
    if (src == NULL)
        return -1;
    src->pid = pid;
    src->ops = ops;
    src->ctx = ctx;
    if (ops->refresh(ctx, &src->base) != 0) {
        free(src);
        return -1;
    }
    s->sources[s->source_count++] = src;
    return 0;
}

int fr_server_serves(const struct fr_server *s, int32_t pid)
{
    for (size_t i = 0; i < s->source_count; i++)
        if (s->sources[i]->pid == pid && !s->sources[i]->ended)
            return 1;
    return 0;
}

size_t fr_server_source_count(const struct fr_server *s)
{
    return live_sources(s);
}

void fr_server_stats(const struct fr_server *s, struct fr_server_stats *out)
{
    *out = s->stats;
    out->clients = s->client_count;
}

/*=====   Network work   =====*/

static void peer_name(int fd, char *out, size_t size)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (getpeername(fd, (struct sockaddr *)&addr, &len) == 0) {
        if (addr.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&addr;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
            port = ntohs(a->sin_port);
        } else if (addr.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&addr;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(out, size, addr.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
             host, port);
}

static int waits_for_request(const struct fr_server *s)
{
    return s->token_len != 0 || live_sources(s) != 1;
}

static void accept_clients(struct fr_server *s)
{
    for (int n = 0; n < 64; n++) {
        int fd = accept4(s->listen_fd, NULL, NULL,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        s->stats.accepted++;
        if (s->client_count >= 4 * (size_t)s->options.max_clients + 64) {
            /* A flood: not even a refusal line. */
            s->stats.refused++;
            close(fd);
            continue;
        }
        if (s->client_count == s->client_cap) {
            size_t cap = s->client_cap ? s->client_cap * 2 : 16;
            struct client **grown = realloc(s->clients, cap * sizeof(*grown));
            if (grown == NULL) {
                close(fd);
                continue;
            }
            s->clients = grown;
            s->client_cap = cap;
        }
        struct client *c = calloc(1, sizeof(*c));
        if (c == NULL) {
            close(fd);
            continue;
        }
        c->fd = fd;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        /* A fixed kernel buffer: a stuck client holds no more than it and
         * its queue. */
        int send_buffer = SEND_BUFFER;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer,
                   sizeof(send_buffer));
        peer_name(fd, c->peer, sizeof(c->peer));
        s->clients[s->client_count++] = c;
        size_t streaming = 0;
        for (size_t i = 0; i + 1 < s->client_count; i++)
            streaming += s->clients[i]->state <= CLIENT_STREAMING;
        if (s->finishing) {
            refuse(s, c, "the server is shutting down");
        } else if (streaming >= s->options.max_clients) {
            char why[80];
            snprintf(why, sizeof(why), "too many clients (at most %u)",
                     s->options.max_clients);
            refuse(s, c, why);
        } else if (waits_for_request(s)) {
            c->state = CLIENT_REQUEST;
            c->deadline_ms = now_ms() + s->options.request_ms;
        } else {
            c->request_len = 0;
            if (settle_request(s, c) != 0)
                close_client(s, s->client_count - 1);
        }
    }
}

static void close_client(struct fr_server *s, size_t index)
{
    struct client *c = s->clients[index];
    close(c->fd);
    for (size_t i = 0; i < c->queue_count; i++)
        unit_put(c->queue[(c->queue_first + i) % c->queue_cap]);
    free(c->queue);
    free(c->markers);
    free(c);
    s->clients[index] = s->clients[--s->client_count];
}

/* Reads what the client sent: the request while one is awaited, else
 * discarded.  -1: the client closed or failed. */
static int read_client(struct fr_server *s, struct client *c)
{
    char scratch[4096];
    for (;;) {
        char *into = scratch;
        size_t room = sizeof(scratch);
        if (c->state == CLIENT_REQUEST) {
            into = c->request + c->request_len;
            room = sizeof(c->request) - c->request_len;
        }
        ssize_t n = recv(c->fd, into, room, MSG_DONTWAIT);
        if (n == 0)
            return -1;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
                       ? 0
                       : -1;
        if (c->state != CLIENT_REQUEST)
            continue;
        c->request_len += (size_t)n;
        /* Complete at an empty line, or when full. */
        int complete = c->request_len == sizeof(c->request);
        if (c->request_len >= 1 && c->request[0] == '\n')
            complete = 1;
        for (size_t i = 1; i < c->request_len && !complete; i++)
            if (c->request[i] == '\n' &&
                (c->request[i - 1] == '\n' ||
                 (c->request[i - 1] == '\r' && i >= 2 &&
                  c->request[i - 2] == '\n')))
                complete = 1;
        if (complete)
            return settle_request(s, c);
    }
}

/* Writes what is queued until the socket is full.  -1: the client is gone. */
static int write_client(struct fr_server *s, struct client *c)
{
    while (c->queue_count != 0) {
        struct iovec iov[WRITE_IOVECS];
        size_t n = 0;
        for (; n < WRITE_IOVECS && n < c->queue_count; n++) {
            struct unit *u = c->queue[(c->queue_first + n) % c->queue_cap];
            size_t skip = n == 0 ? c->sent_of_first : 0;
            iov[n].iov_base = u->bytes + skip;
            iov[n].iov_len = u->len - skip;
        }
        struct msghdr msg;
        memset(&msg, 0, sizeof(msg));
        msg.msg_iov = iov;
        msg.msg_iovlen = n;
        ssize_t sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        s->stats.bytes_sent += (uint64_t)sent;
        size_t left = (size_t)sent;
        /* A short write: what is left of a unit goes first next time. */
        while (left > 0) {
            struct unit *u = c->queue[c->queue_first];
            size_t rest = u->len - c->sent_of_first;
            if (left < rest) {
                c->sent_of_first += left;
                break;
            }
            left -= rest;
            c->sent_of_first = 0;
            c->queued_bytes -= u->len;
            unit_put(u);
            c->queue_first = (c->queue_first + 1) % c->queue_cap;
            c->queue_count--;
        }
    }
    return 0;
}

void fr_server_poll(struct fr_server *s, unsigned timeout_ms)
{
    uint64_t until = now_ms() + timeout_ms;
    for (;;) {
        size_t n = s->client_count;
        struct pollfd *fds = calloc(n + 1, sizeof(*fds));
        if (fds == NULL)
            return;
        fds[0].fd = s->listen_fd;
        fds[0].events = POLLIN;
        uint64_t now = now_ms();
        uint64_t wake = until;
        for (size_t i = 0; i < n; i++) {
            struct client *c = s->clients[i];
            fds[i + 1].fd = c->fd;
            fds[i + 1].events = POLLIN;
            if (c->queue_count != 0)
                fds[i + 1].events |= POLLOUT;
            if ((c->state == CLIENT_REQUEST || c->state >= CLIENT_CLOSING) &&
                c->deadline_ms < wake)
                wake = c->deadline_ms;
        }
        int timeout = wake > now ? (int)(wake - now) : 0;
        int ready = poll(fds, n + 1, timeout);
        if (ready < 0 && errno != EINTR) {
            free(fds);
            return;
        }
        now = now_ms();
        /* From the last one down: closing moves the last client into the
         * closed one's place. */
        for (size_t i = n; i-- > 0;) {
            struct client *c = s->clients[i];
            short re = ready > 0 ? fds[i + 1].revents : 0;
            int gone = 0;
            if (re & (POLLIN | POLLHUP | POLLERR))
                gone = read_client(s, c) != 0;
            if (!gone && c->state == CLIENT_REQUEST && now >= c->deadline_ms)
                gone = settle_request(s, c) != 0;
            if (!gone && (re & POLLOUT))
                gone = write_client(s, c) != 0;
            if (!gone && c->failed) {
                say(s, c->peer, "too slow to take the names and markers: ",
                    "closed");
                gone = 1;
            }
            if (!gone && c->state == CLIENT_CLOSING && c->queue_count == 0) {
                shutdown(c->fd, SHUT_WR);
                c->state = CLIENT_LINGER;
                c->deadline_ms = now + LINGER_MS;
            }
            if (!gone && c->state >= CLIENT_CLOSING && now >= c->deadline_ms)
                gone = 1;
            if (gone)
                close_client(s, i);
        }
        if (ready > 0 && (fds[0].revents & POLLIN))
            accept_clients(s);
        free(fds);
        if (now >= until)
            return;
    }
}

/*=====   Draining   =====*/

static void drain_ring(struct fr_server *s, struct source *src,
                       struct flightrec_region_ring *r, void *arg)
{
    /* A rewind another process asked for (flightrec ctl) is served here:
     * the server is the session's consumer. */
    if (arg != NULL && *(const int *)arg)
        fr_ring_rewind(r);
    if (fr_ring_has_news(r)) {
        struct frw_sink sink = collect_sink(s);
        uint32_t words[4];
        (void)fr_ring_drain(&sink, src->base, r, name_of(src, r, words));
        (void)frw_sink_flush(&sink);
        fan_out(s, src, NULL);
    }
    if (src->ops->ring_read != NULL)
        src->ops->ring_read(src->ctx, r);
}

static void drain_source(struct fr_server *s, struct source *src)
{
    int alive = src->ops->alive(src->ctx);
    if (src->ops->refresh(src->ctx, &src->base) != 0) {
        alive = 0;
    } else {
        struct frw_sink sink = collect_sink(s);
        const struct flightrec_region_header *h = header_of(src->base);
        frw_put_event_names(&sink, (const void *)(src->base + h->names_offset),
                            src->seen);
        (void)frw_sink_flush(&sink);
        fan_out(s, src, NULL);
        struct flightrec_region_control *control =
            (void *)(src->base + h->control_offset);
        uint32_t rewind_request = 0;
        int rewind = fr_rewind_requested(control, &rewind_request);
        for_each_ring(src, drain_ring, s, &rewind);
        if (rewind)
            fr_rewind_served(control, rewind_request);
    }
    /* What the program wrote before it was seen gone was drained above. */
    if (!alive || s->finishing) {
        src->ended = 1;
        uint64_t deadline = now_ms() + s->options.end_grace_ms;
        for (size_t i = 0; i < s->client_count; i++) {
            struct client *c = s->clients[i];
            if (c->source != src)
                continue;
            if (c->state == CLIENT_STREAMING)
                end_stream(c);
            c->source = NULL;
            if (c->state == CLIENT_CLOSING && !s->finishing)
                c->deadline_ms = deadline;
        }
        if (src->ops->ended != NULL)
            src->ops->ended(src->ctx);
    }
}

void fr_server_drain(struct fr_server *s)
{
    for (size_t i = 0; i < s->source_count;) {
        struct source *src = s->sources[i];
        if (!src->ended)
            drain_source(s, src);
        if (src->ended) {
            free(src);
            s->sources[i] = s->sources[--s->source_count];
            continue;
        }
        i++;
    }
}

void fr_server_finish(struct fr_server *s, unsigned grace_ms)
{
    s->finishing = 1;
    fr_server_drain(s);
    uint64_t deadline = now_ms() + grace_ms;
    for (size_t i = 0; i < s->client_count; i++) {
        struct client *c = s->clients[i];
        if (c->state == CLIENT_REQUEST)
            c->state = CLIENT_CLOSING; /* nothing was sent: just closed */
        if (c->state == CLIENT_STREAMING)
            end_stream(c);
        if (c->state == CLIENT_CLOSING)
            c->deadline_ms = deadline;
    }
    while (s->client_count != 0 && now_ms() < deadline + LINGER_MS)
        fr_server_poll(s, 50);
}

void fr_server_close(struct fr_server *s)
{
    if (s == NULL)
        return;
    while (s->client_count != 0)
        close_client(s, s->client_count - 1);
    for (size_t i = 0; i < s->source_count; i++)
        free(s->sources[i]);
    free(s->sources);
    free(s->clients);
    free(s->collect.bytes);
    close(s->listen_fd);
    free(s);
}
