/* GASNet-1's API (gasnet.h) as a GASNet-1 program uses it: gasnet_init,
 * gasnet_attach with a handler table (a fixed index and assigned ones),
 * segment information, AM requests and replies of every category (0, 2
 * and 16 arguments; LongAsync), message sources, puts and gets in every
 * form with their syncs, memset, HSLs, GASNET_BLOCKUNTIL, the GASNet-EX
 * objects behind it, barriers and gasnet_exit. Each rank talks to the
 * next; every byte is checked. */
#include <gasnet.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static gasnet_node_t me, n, peer;
static int errors;
#define FAIL(...) do { fprintf(stderr, "legacy.c: rank %u: ", (unsigned)me); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); errors++; } while (0)

#define H_PING 201
enum { SEGSZ = 1 << 20, MED = 512, LONGSZ = 65536, SIXTEEN = 16 };
static gasnet_seginfo_t *segs;
static gasnet_handlerentry_t table[6];
static volatile int pongs, medium_back, long_back, long_pings;
static volatile int64_t pong_value;
static gasnet_hsl_t lock = GASNET_HSL_INITIALIZER;

static volatile sig_atomic_t got_signal;
static void on_usr1(int sig) { got_signal = sig; }
static unsigned char pat(size_t i, unsigned salt) { return (unsigned char)(i * 31 + salt); }

static void check_source(gasnet_token_t t, gasnet_node_t want, const char *what) {
    gasnet_node_t src = 9999;
    if (gasnet_AMGetMsgSource(t, &src) != GASNET_OK || src != want) FAIL("%s: source %u, want %u", what, (unsigned)src, (unsigned)want);
}

/* Short request, 2 arguments: reply with their sum (Short, 1 argument). */
static void ping(gasnet_token_t t, gasnet_handlerarg_t a, gasnet_handlerarg_t b) {
    check_source(t, (me + n - 1) % n, "ping");
    gasnet_AMReplyShort1(t, table[1].index, a + b);
}
static void pong(gasnet_token_t t, gasnet_handlerarg_t sum) {
    check_source(t, peer, "pong");
    gasnet_hsl_lock(&lock);
    pong_value = sum;
    pongs++;
    gasnet_hsl_unlock(&lock);
}
/* Medium request, 1 argument (the salt): check, echo as a Medium reply. */
static void med(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t salt) {
    const unsigned char *p = buf;
    if (nbytes != MED) FAIL("medium request of %zu bytes", nbytes);
    for (size_t i = 0; i < nbytes; i++)
        if (p[i] != pat(i, (unsigned)salt)) { FAIL("medium request byte %zu", i); break; }
    gasnet_AMReplyMedium0(t, table[3].index, buf, nbytes);
}
static void med_back(gasnet_token_t t, void *buf, size_t nbytes) {
    const unsigned char *p = buf;
    check_source(t, peer, "medium reply");
    for (size_t i = 0; i < nbytes; i++)
        if (p[i] != pat(i, 7)) { FAIL("medium reply byte %zu", i); break; }
    medium_back = (int)nbytes;
}
/* Long request, 16 arguments (0..15): check the payload in this rank's
 * segment, then Long-reply it into the sender's segment after it. */
static void lng(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t a0, gasnet_handlerarg_t a1,
                gasnet_handlerarg_t a2, gasnet_handlerarg_t a3, gasnet_handlerarg_t a4, gasnet_handlerarg_t a5,
                gasnet_handlerarg_t a6, gasnet_handlerarg_t a7, gasnet_handlerarg_t a8, gasnet_handlerarg_t a9,
                gasnet_handlerarg_t a10, gasnet_handlerarg_t a11, gasnet_handlerarg_t a12, gasnet_handlerarg_t a13,
                gasnet_handlerarg_t a14, gasnet_handlerarg_t a15) {
    gasnet_handlerarg_t a[SIXTEEN] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    for (int i = 0; i < SIXTEEN; i++)
        if (a[i] != i * 3) FAIL("long request argument %d is %d", i, (int)a[i]);
    if ((char *)buf != (char *)segs[me].addr + 4096) FAIL("long payload at %p, want %p", buf, (void *)((char *)segs[me].addr + 4096));
    const unsigned char *p = buf;
    for (size_t i = 0; i < nbytes; i++)
        if (p[i] != pat(i, 11)) { FAIL("long request byte %zu", i); break; }
    gasnet_node_t src;
    gasnet_AMGetMsgSource(t, &src);
    long_pings++;
    gasnet_AMReplyLong1(t, table[5].index, buf, nbytes, (char *)segs[src].addr + 4096 + LONGSZ, (gasnet_handlerarg_t)nbytes);
}
static void lng_back(gasnet_token_t t, void *buf, size_t nbytes, gasnet_handlerarg_t len) {
    (void)t;
    if ((size_t)len != nbytes || (char *)buf != (char *)segs[me].addr + 4096 + LONGSZ) FAIL("long reply: %zu bytes at %p", nbytes, buf);
    long_back++;
}

int main(int argc, char **argv) {
    if (gasnet_init(&argc, &argv) != GASNET_OK) return 1;
    me = gasnet_mynode(); n = gasnet_nodes(); peer = (me + 1) % n;
    gasnet_seginfo_t early;
    if (gasnet_getSegmentInfo(&early, 1) != GASNET_ERR_NOT_INIT) FAIL("gasnet_getSegmentInfo before gasnet_attach did not return GASNET_ERR_NOT_INIT");
    if (gasnet_getMaxLocalSegmentSize() < SEGSZ || gasnet_getMaxGlobalSegmentSize() > gasnet_getMaxLocalSegmentSize()
        || gasnet_getMaxGlobalSegmentSize() % GASNET_PAGESIZE)
        FAIL("segment limits: local %lu, global %lu", (unsigned long)gasnet_getMaxLocalSegmentSize(), (unsigned long)gasnet_getMaxGlobalSegmentSize());
    table[0].index = H_PING; table[0].fnptr = (void (*)())ping;
    table[1].index = 0; table[1].fnptr = (void (*)())pong;
    table[2].index = 0; table[2].fnptr = (void (*)())med;
    table[3].index = 0; table[3].fnptr = (void (*)())med_back;
    table[4].index = 0; table[4].fnptr = (void (*)())lng;
    table[5].index = 0; table[5].fnptr = (void (*)())lng_back;
    if (gasnet_attach(table, 6, SEGSZ + 1, 0) != GASNET_ERR_BAD_ARG) FAIL("a segment size that is not a multiple of GASNET_PAGESIZE was accepted");
    if (gasnet_attach(table, 6, SEGSZ, GASNET_PAGESIZE) != GASNET_OK) return 1;
    if (table[0].index != H_PING) FAIL("a fixed index moved");
    for (int i = 1; i < 6; i++) {
        if (table[i].index < 128) FAIL("table[%d] was given index %u", i, (unsigned)table[i].index);
        for (int j = 0; j < i; j++)
            if (table[i].index == table[j].index) FAIL("table[%d] and table[%d] share index %u", i, j, (unsigned)table[i].index);
    }
    segs = malloc(n * sizeof *segs);
    if (gasnet_getSegmentInfo(segs, (int)n) != GASNET_OK) return 1;
    if (segs[me].size != SEGSZ) FAIL("own segment of %lu bytes", (unsigned long)segs[me].size);
    gasnet_nodeinfo_t *ni = malloc(n * sizeof *ni);
    if (gasnet_getNodeInfo(ni, (int)n) != GASNET_OK) return 1;
    if (ni[me].offset != 0) FAIL("own node's offset %lu", (unsigned long)ni[me].offset);
    /* GASNET_SUPERNODE_MAXSIZE unset or 0 (the default): one supernode per
       host; 1: every rank on its own (other values are not checked). */
    const char *maxsize = getenv("GASNET_SUPERNODE_MAXSIZE");
    int per_host = !maxsize || !strcmp(maxsize, "0");
    int checked = per_host || !strcmp(maxsize, "1");
    for (gasnet_node_t r = 0; checked && r < n; r++)
        if ((ni[r].supernode == ni[me].supernode) != (per_host && ni[r].host == ni[me].host ? 1 : r == me))
            FAIL("node %u: supernode %u (mine %u)", (unsigned)r, (unsigned)ni[r].supernode, (unsigned)ni[me].supernode);
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t seg;
    gasnet_QueryGexObjects(&client, &ep, &tm, &seg);
    if (gex_TM_QueryRank(tm) != me || gex_Segment_QueryAddr(seg) != segs[me].addr || gex_EP_QueryClient(ep) != client)
        FAIL("gasnet_QueryGexObjects");
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);

    /* AMs: a Short round trip, a Medium echo, a Long (16 arguments) and a
     * LongAsync, each answered by a reply of another category. */
    for (int i = 0; i < 100; i++) {
        gasnet_AMRequestShort2(peer, H_PING, i, 1000);
        GASNET_BLOCKUNTIL(pongs == i + 1);
        if (pong_value != i + 1000) FAIL("pong %d carried %lld", i, (long long)pong_value);
    }
    unsigned char mb[MED];
    for (size_t i = 0; i < MED; i++) mb[i] = pat(i, 7);
    gasnet_AMRequestMedium1(peer, table[2].index, mb, MED, 7);
    GASNET_BLOCKUNTIL(medium_back == MED);
    unsigned char *lb = malloc(LONGSZ);
    for (size_t i = 0; i < LONGSZ; i++) lb[i] = pat(i, 11);
    gasnet_AMRequestLong16(peer, table[4].index, lb, LONGSZ, (char *)segs[peer].addr + 4096,
                           0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45);
    GASNET_BLOCKUNTIL(long_back == 1);
    gasnet_AMRequestLongAsync16(peer, table[4].index, lb, LONGSZ, (char *)segs[peer].addr + 4096,
                                0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45);
    GASNET_BLOCKUNTIL(long_back == 2);
    {
        unsigned char back[LONGSZ];
        memcpy(back, (char *)segs[me].addr + 4096 + LONGSZ, LONGSZ);
        for (size_t i = 0; i < LONGSZ; i++)
            if (back[i] != pat(i, 11)) { FAIL("long reply byte %zu", i); break; }
    }
    GASNET_BLOCKUNTIL(long_pings == 2);
    if (gasnet_AMMaxArgs() != 16 || gasnet_AMMaxMedium() < MED || gasnet_AMMaxLongRequest() < LONGSZ || gasnet_AMMaxLongReply() < LONGSZ)
        FAIL("AM limits");
    gasnet_barrier_notify(1, 0);
    if (gasnet_barrier_wait(1, 0) != GASNET_OK) FAIL("named barrier");

    /* GASNet-1's try calls poll: each rank's flag is set by the previous
     * rank's put, which over tcp;ofi_rxm lands only when this rank polls,
     * and the only calls in the loop are tries over complete handles. */
    {
        volatile int *flag = (volatile int *)((char *)segs[me].addr + 900000);
        gasnet_handle_t hp = gasnet_put_nb_val(peer, (char *)segs[peer].addr + 900000, 1, sizeof(int));
        gasnet_handle_t none[2] = {GASNET_INVALID_HANDLE, GASNET_INVALID_HANDLE};
        while (*flag == 0) {
            gasnet_try_syncnb_some(none, 2);
            gasnet_try_syncnb_all(none, 2);
        }
        gasnet_wait_syncnb(hp);
    }

    /* Puts and gets into the next rank's segment, past the AM area. */
    char *rbase = (char *)segs[peer].addr + 262144;
    enum { CH = 8192 };
    unsigned char src[CH], dst[CH];
    for (size_t i = 0; i < CH; i++) src[i] = pat(i, 1 + me);
    gasnet_put(peer, rbase, src, CH);
    memset(dst, 0, CH);
    gasnet_get(dst, peer, rbase, CH);
    if (memcmp(src, dst, CH)) FAIL("blocking put/get");
    gasnet_handle_t hs[4];
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < CH; i++) src[i] = pat(i, 50 + k);
        hs[k] = k % 2 ? gasnet_put_nb(peer, rbase + CH * (k + 1), src, CH) : gasnet_put_nb_bulk(peer, rbase + CH * (k + 1), src, CH);
        if (k % 2 == 0) gasnet_wait_syncnb(hs[k]), hs[k] = GASNET_INVALID_HANDLE;
    }
    gasnet_wait_syncnb_all(hs, 4);
    unsigned char got[4][CH];
    for (int k = 0; k < 4; k++) hs[k] = k % 2 ? gasnet_get_nb(got[k], peer, rbase + CH * (k + 1), CH) : gasnet_get_nb_bulk(got[k], peer, rbase + CH * (k + 1), CH);
    while (gasnet_try_syncnb_all(hs, 4) != GASNET_OK) gasnet_AMPoll();
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < CH; i++)
            if (got[k][i] != pat(i, 50 + k)) { FAIL("nb put/get %d byte %zu", k, i); break; }
    for (int k = 0; k < 4; k++) {
        memset(src, 0x30 + k, CH);
        if (k % 2) gasnet_put_nbi(peer, rbase + CH * (k + 5), src, CH);
        else { gasnet_put_nbi_bulk(peer, rbase + CH * (k + 5), src, CH); gasnet_wait_syncnbi_puts(); }
    }
    gasnet_wait_syncnbi_puts();
    for (int k = 0; k < 4; k++) k % 2 ? gasnet_get_nbi(got[k], peer, rbase + CH * (k + 5), CH) : gasnet_get_nbi_bulk(got[k], peer, rbase + CH * (k + 5), CH);
    gasnet_wait_syncnbi_gets();
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < CH; i++)
            if (got[k][i] != 0x30 + k) { FAIL("nbi put/get %d byte %zu", k, i); break; }
    gasnet_put_val(peer, rbase, 0x1122334455667788ull, 8);
    gasnet_put_nbi_val(peer, rbase + 8, 0xabcd, 2);
    gasnet_wait_syncnb(gasnet_put_nb_val(peer, rbase + 16, 0x5a, 1));
    gasnet_wait_syncnbi_all();
    if (gasnet_get_val(peer, rbase, 8) != 0x1122334455667788ull || gasnet_get_val(peer, rbase + 8, 2) != 0xabcd
        || gasnet_get_val(peer, rbase + 16, 1) != 0x5a)
        FAIL("value puts and gets");
    gasnet_memset(peer, rbase, 0xc3, 3 * 4096 + 17);
    {
        static unsigned char ms[3 * 4096 + 18];
        gasnet_get(ms, peer, rbase, sizeof ms);
        for (size_t i = 0; i < sizeof ms - 1; i++)
            if (ms[i] != 0xc3) { FAIL("memset byte %zu is %u", i, ms[i]); break; }
        if (ms[sizeof ms - 1] != pat(3 * 4096 + 17 - CH, 50)) FAIL("memset wrote past its end");
    }
    if (peer != me && ni[peer].supernode == ni[me].supernode) {
        /* The peer's segment is mapped here at its address plus offset. */
        *((volatile unsigned char *)rbase + CH * 11 + ni[peer].offset) = 0x99;
        if (gasnet_get_val(peer, rbase + CH * 11, 1) != 0x99) FAIL("a store through gasnet_nodeinfo_t's offset");
    }
    {
        gasnet_valget_handle_t vh = gasnet_get_nb_val(peer, rbase, 8);
        if (gasnet_wait_syncnb_valget(vh) != (gasnet_register_value_t)0xc3c3c3c3c3c3c3c3ull) FAIL("gasnet_get_nb_val");
        gasnet_wait_syncnb(gasnet_memset_nb(peer, rbase, 0x11, 64));
        gasnet_memset_nbi(peer, rbase + 64, 0x22, 64);
        gasnet_wait_syncnbi_all();
        if (gasnet_get_val(peer, rbase + 63, 1) != 0x11 || gasnet_get_val(peer, rbase + 64, 1) != 0x22) FAIL("gasnet_memset_nb/nbi");
    }
    gasnet_begin_nbi_accessregion();
    memset(src, 0x77, CH);
    gasnet_put_nbi(peer, rbase + CH * 10, src, CH);
    gasnet_handle_t region = gasnet_end_nbi_accessregion();
    gasnet_wait_syncnb(region);
    if (gasnet_get_val(peer, rbase + CH * 10 + CH - 1, 1) != 0x77) FAIL("access region");
    if (gasnet_hsl_trylock(&lock) != GASNET_OK) FAIL("gasnet_hsl_trylock");
    gasnet_hsl_unlock(&lock);
    gasnett_sighandlerfn_t before = gasnett_reghandler(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    if (got_signal != SIGUSR1 || gasnett_reghandler(SIGUSR1, before) != on_usr1) FAIL("gasnett_reghandler");
    if (gasnett_print_backtrace(2) == 0) FAIL("gasnett_print_backtrace claimed a backtrace");
    gasnet_hsl_t dyn;
    gasnet_hsl_init(&dyn);
    gasnet_hsl_destroy(&dyn);

    /* Print before the last barrier: gasnet_exit ends every rank. */
    if (errors == 0)
        printf("legacy.c: rank %u of %u: ok: GASNet-1 AMs, puts, gets and syncs checked\n", (unsigned)me, (unsigned)n);
    fflush(stdout);
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    free(lb);
    free(segs);
    free(ni);
    gasnet_exit(errors ? 1 : 0);
    return 0;
}
