/* Uses every name of the GASNet-EX C API subset (docs/c-api.md lists
 * them), so a missing or misspelt name fails the build. Built and linked
 * by the test suite; running it (one rank or more) exercises each once. */
/* setenv, for the boolean variables below. */
#define _POSIX_C_SOURCE 200112L
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Configuration macros a program tests with #if. */
#if !defined(GASNET_SEQ) || GASNET_SEQ != 1
#error GASNET_SEQ
#endif
#if defined(GASNET_PAR) || defined(GASNET_PARSYNC) || defined(GASNET_SEGMENT_EVERYTHING) || defined(GASNET_DEBUG)
#error a configuration macro that must be undefined is defined
#endif
#if !defined(GASNET_PSHM) || GASNET_PSHM != 1
#error GASNET_PSHM (the shared-memory path exists)
#endif
#if defined(GASNET_HAVE_MK_CLASS_CUDA_UVM) || defined(GASNET_HAVE_MK_CLASS_HIP) || defined(GASNET_HAVE_MK_CLASS_ZE) || defined(GASNET_HAVE_MK_CLASS_MULTIPLE)
#error a GASNET_HAVE_MK_CLASS_* macro is defined
#endif
#if GASNET_ALIGNED_SEGMENTS != 0 && GASNET_ALIGNED_SEGMENTS != 1
#error GASNET_ALIGNED_SEGMENTS
#endif
#if SIZEOF_GEX_RMA_VALUE_T != 8 || GASNETT_PAGESIZE < 4096
#error sizes
#endif

GASNETT_IDENT(names_ident, "$names.c: the subset's names$");
GASNETT_BEGIN_EXTERNC
GASNETT_INLINE(twice) int twice(int x) { return 2 * x; }
GASNETT_FORMAT_PRINTF(say, 1, 2, static void say(const char *fmt, ...));
GASNETT_NORETURN static void die(void) GASNETT_NORETURNP(die);
GASNETT_END_EXTERNC
static void die(void) { gasnet_exit(3); }
static void say(const char *fmt, ...) { (void)fmt; }

static gex_HSL_t hsl = GEX_HSL_INITIALIZER;
static gasnett_atomic_t counter = gasnett_atomic_init(0);
static volatile int hits;

static void h_short(gex_Token_t t, gex_AM_Arg_t a) {
    gex_Token_Info_t info;
    if (gex_Token_Info(t, &info, GEX_TI_SRCRANK) & GEX_TI_SRCRANK) hits += a + (int)(info.gex_srcrank * 0);
    gex_AM_ReplyShort0(t, 0xff, 0);
}
static void h_reply(gex_Token_t t) { (void)t; gasnett_atomic_increment(&counter, 0); }
static void h_med(gex_Token_t t, void *buf, size_t nb) {
    gex_AM_SrcDesc_t sd = gex_AM_PrepareReplyMedium(t, NULL, 0, 8, NULL, 0, 0);
    (void)buf; (void)nb;
    gex_AM_CommitReplyMedium0(sd, 0xfd, 0);
    (void)gex_AM_ReplyMedium0; (void)gex_AM_ReplyLong0; (void)gex_AM_PrepareReplyLong; (void)gex_AM_CommitReplyLong0;
}
static void h_medrep(gex_Token_t t, void *buf, size_t nb) { (void)t; (void)buf; (void)nb; hits++; }

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm = GEX_TM_INVALID; gex_Segment_t seg;
    GASNET_BEGIN_FUNCTION();
    if (gex_Client_Init(&client, &ep, &tm, "names_test", &argc, &argv, 0) != GASNET_OK) die();
    gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_barrier_wait(0, GASNET_BARRIERFLAG_ANONYMOUS);
    /* Object queries before the segment exists. */
    void *untouched = (void *)&hits; uintptr_t usize = 7;
    if (gex_EP_QuerySegment(ep) != GEX_SEGMENT_INVALID) die();
    if (gex_Segment_QueryBound(tm, 0, &untouched, NULL, &usize) == 0 || untouched != (void *)&hits || usize != 7) die();
    if (gex_Segment_Attach(&seg, tm, GASNETT_PAGESIZE * 4) != GASNET_OK) die();
    /* ... and after. */
    {
        gex_Rank_t r = gex_TM_QueryRank(tm), nr = gex_TM_QuerySize(tm);
        void *own = NULL, *own_local = NULL, *owner = NULL; uintptr_t own_size = 0;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(tm, r, &own, NULL, &own_size, 0));
        if (gex_Segment_QueryAddr(seg) != own || gex_Segment_QuerySize(seg) != GASNETT_PAGESIZE * 4 || own_size != GASNETT_PAGESIZE * 4) die();
        if (gex_Segment_QueryClient(seg) != client || gex_Segment_QueryFlags(seg) != 0) die();
        if (gex_Segment_QueryBound(tm, r, &owner, &own_local, &usize) != 0 || owner != own || own_local != own || usize != own_size) die();
        if (gex_EP_QueryClient(ep) != client || gex_EP_QueryFlags(ep) != 0 || gex_EP_QuerySegment(ep) != seg || gex_EP_QueryIndex(ep) != 0) die();
        if (gex_TM_QueryClient(tm) != client || gex_TM_QueryEP(tm) != ep || gex_TM_QueryFlags(tm) != 0) die();
        if (strcmp(gex_Client_QueryName(client), "names_test") != 0 || gex_Client_QueryFlags(client) != 0) die();
        gex_EP_Location_t loc = gex_TM_TranslateRankToEP(tm, (r + 1) % nr, 0);
        if (loc.gex_rank != (r + 1) % nr || loc.gex_ep_index != 0) die();
        if (gex_System_QueryMaxThreads() != 1 || gex_System_GetVerboseErrors() != 1) die();
        /* Silenced: a second attach fails without a message (the test
         * checks stderr), then messages are back on. */
        gex_System_SetVerboseErrors(0);
        gex_Segment_t again;
        if (gex_System_GetVerboseErrors() != 0 || gex_Segment_Attach(&again, tm, GASNETT_PAGESIZE) != GASNET_ERR_RESOURCE) die();
        gex_System_SetVerboseErrors(1);
        gex_TM_t sub = GEX_TM_INVALID;
        gex_TM_Split(&sub, tm, (int)(r % 2), (int)r, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        if (gex_TM_QueryFlags(sub) != GEX_FLAG_TM_NO_SCRATCH || gex_TM_QueryEP(sub) != ep || gex_TM_QueryClient(sub) != client) die();
        loc = gex_TM_TranslateRankToEP(sub, 0, 0);
        if (loc.gex_rank != r % 2) die();
        /* A TM-pair: point-to-point with job ranks. */
        gex_TM_t pair = gex_TM_Pair(ep, 0);
        if (pair != gex_TM_Pair(ep, 0) || pair == tm || pair == GEX_TM_INVALID) die();
        void *peer_base = NULL; uintptr_t peer_size = 0;
        gex_Event_Wait(gex_EP_QueryBoundSegmentNB(pair, (r + 1) % nr, &peer_base, NULL, &peer_size, 0));
        if (peer_size != GASNETT_PAGESIZE * 4) die();
        uint64_t word = 0x1234 + r, back = 0;
        gex_RMA_PutBlocking(pair, (r + 1) % nr, (char *)peer_base + 64, &word, 8, 0);
        gex_RMA_GetBlocking(pair, &back, (r + 1) % nr, (char *)peer_base + 64, 8, 0);
        if (back != word) die();
        if (gex_AM_MaxRequestMedium(pair, GEX_RANK_INVALID, GEX_EVENT_NOW, 0, 0) < gex_AM_LUBRequestMedium()) die();
        gex_Coll_BarrierBlocking(tm, 0);
        if (*(uint64_t *)((char *)own + 64) != 0x1234 + (r + nr - 1) % nr) die();
        gex_Coll_BarrierBlocking(tm, 0);
    }
    gex_AM_Entry_t e[4] = {
        {0xfe, h_short, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "short"},
        {0xff, h_reply, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "reply"},
        {0xfc, h_med, GEX_FLAG_AM_MEDLONG | GEX_FLAG_AM_REQREP, 0, NULL, "medlong"},
        {0xfd, h_medrep, GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY, 0, NULL, "medrep"},
    };
    /* The entry's fields by name. */
    e[3].gex_index = 0xfd; e[3].gex_fnptr = (gex_AM_Fn_t)h_medrep; e[3].gex_flags = GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_REPLY;
    e[3].gex_nargs = 0; e[3].gex_cdata = NULL; e[3].gex_name = "medrep";
    if (gex_EP_RegisterHandlers(ep, e, 4) != GASNET_OK) die();
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    gex_Rank_t a, b, c, d, cnt, idx;
    gex_RankInfo_t *info;
    gex_System_QueryMyPosition(&a, &b, &c, &d);
    gex_System_QueryHostInfo(&info, &cnt, &idx);
    gex_System_QueryNbrhdInfo(&info, &cnt, &idx);
    void *base; uintptr_t size;
    gex_Event_t ev = gex_EP_QueryBoundSegmentNB(tm, (me + 1) % n, &base, NULL, &size, GEX_FLAG_IMMEDIATE);
    gex_Event_Wait(ev);
    gasnet_seginfo_t si = {base, size};
    gex_Flags_t fl = GEX_FLAG_AM_SHORT | GEX_FLAG_AM_MEDIUM | GEX_FLAG_AM_LONG | GEX_FLAG_AM_REQUEST | GEX_FLAG_AM_REPLY;
    (void)fl;
    gex_Coll_BarrierBlocking(tm, 0);

    gex_AM_RequestShort1(tm, (me + 1) % n, 0xfe, 0, 1);
    gex_AM_RequestMedium0(tm, me, 0xfc, "x", 1, GEX_EVENT_NOW, 0);
    gex_AM_RequestLong0(tm, (me + 1) % n, 0xfc, "y", 1, si.addr, GEX_EVENT_GROUP, 0);
    gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(tm, me, NULL, 1, 1, NULL, GEX_FLAG_AM_PREPARE_LEAST_CLIENT, 0);
    *(char *)gex_AM_SrcDescAddr(sd) = 'z';
    if (gex_AM_SrcDescSize(sd) < 1) die();
    gex_AM_CommitRequestMedium0(sd, 0xfc, 1);
    sd = gex_AM_PrepareRequestLong(tm, (me + 1) % n, NULL, 1, 1, NULL, NULL, 0, 0);
    gex_AM_CommitRequestLong0(sd, 0xfc, 0, si.addr);
    GASNET_BLOCKUNTIL(gasnett_atomic_read(&counter, 0) == 1 && hits >= 4);
    size_t lim = gex_AM_LUBRequestMedium() + gex_AM_LUBReplyMedium() + gex_AM_LUBRequestLong() + gex_AM_LUBReplyLong()
               + gex_AM_MaxRequestMedium(tm, me, GEX_EVENT_NOW, GEX_FLAG_AM_PREPARE_LEAST_ALLOC, gex_AM_MaxArgs())
               + gex_AM_MaxReplyMedium(tm, GEX_RANK_INVALID, NULL, 0, 0)
               + gex_AM_MaxRequestLong(tm, me, NULL, 0, 0) + gex_AM_MaxReplyLong(tm, me, NULL, 0, 0);
    gex_HSL_Lock(&hsl);
    gex_HSL_Unlock(&hsl);

    char local[8] = "abcdefg";
    gex_RMA_PutBlocking(tm, (me + 1) % n, si.addr, local, 0, 0);
    void *mine; gex_EP_QueryBoundSegmentNB(tm, me, &mine, NULL, NULL, 0);
    gex_RMA_PutBlocking(tm, me, mine, local, 8, 0);
    gex_RMA_GetBlocking(tm, local, me, mine, 8, 0);
    gex_Event_t evs[2];
    evs[0] = gex_RMA_PutNB(tm, me, mine, local, 8, GEX_EVENT_DEFER, 0);
    evs[1] = gex_RMA_GetNB(tm, local, me, mine, 8, 0);
    gex_Event_WaitAll(evs, 2, 0);
    gex_RMA_PutNBI(tm, me, mine, local, 8, GEX_EVENT_NOW, 0);
    gex_RMA_GetNBI(tm, local, me, mine, 8, 0);
    gex_NBI_Wait(GEX_EC_ALL, 0);
    gex_NBI_Wait(GEX_EC_PUT | GEX_EC_GET | GEX_EC_AM, 0);
    if (gex_Event_Test(GEX_EVENT_INVALID) != GASNET_OK) die();
    gex_Event_Wait(gex_Coll_BarrierNB(tm, 0));
    int id;
    gasnet_barrier_notify(5, 0);
    if (gasnet_barrier_try(5, 0) == GASNET_ERR_NOT_READY) gasnet_barrier_wait(5, 0);
    if (gasnet_barrier_result(&id) != 0 || id != 5) die();
    gasnet_barrier(0, GASNET_BARRIERFLAG_UNNAMED);
    gasnet_AMPoll();
    gasnet_set_waitmode(GASNET_WAIT_BLOCK);

    gasnett_tick_t t0 = gasnett_ticks_now();
    gasnett_nsleep(1000);
    uint64_t us = gasnett_ticks_to_us(gasnett_ticks_now() - t0);
    double g = gasnett_tick_granularityus() + gasnett_tick_overheadus();
    uint64_t sum = gasnett_checksum(local, 8);
    int cpus = gasnett_cpu_count();
    int yes = gasnett_getenv_yesno_withdefault("NAMES_UNSET_VARIABLE", 1);
    /* The conduit's boolean words; an empty variable counts as unset. */
    setenv("NAMES_ON_VARIABLE", "on", 1);
    setenv("NAMES_OFF_VARIABLE", "Off", 1);
    setenv("NAMES_EMPTY_VARIABLE", "", 1);
    if (gasnett_getenv_yesno_withdefault("NAMES_ON_VARIABLE", 0) != 1 ||
        gasnett_getenv_yesno_withdefault("NAMES_OFF_VARIABLE", 1) != 0 ||
        gasnett_getenv_yesno_withdefault("NAMES_EMPTY_VARIABLE", 1) != 1)
        die();
    const char *host = gasnett_gethostname();
    int64_t k = gasnett_parse_int("4K", 1);
    gasnett_sched_yield();
    if_pf (k != 4096) die();
    if_pt (yes) say("%s", host);
    if (gasnett_verboseenv() || strlen(gasnett_performance_warning_str()) > 0) say("warnings");
    const char *cfg = GASNET_CONFIG_STRING _STRINGIFY(GASNET_CORE_NAME) GASNET_CONDUIT_NAME_STR GASNETT_SYSTEM_TUPLE
        PLATFORM_COMPILER_VERSION_STR _STRINGIFY(PLATFORM_COMPILER_FAMILYNAME) _STRINGIFY(GASNET_CORE_VERSION);
    int _CONCAT(var, 1) = twice(1);
    GASNETT_TRACE_PRINTF("%d", var1);
    (void)var1;
    GASNETT_TRACE_SETSOURCELINE(__FILE__, __LINE__);
    gex_Rank_t ranks = gex_System_QueryJobRank() + gex_System_QueryJobSize();
    gex_RMA_Value_t rv = 0; gex_AM_Arg_t arg = 0; gex_Addr_t addr = NULL; gex_TI_t ti = GEX_TI_ALL; gex_EC_t ec = GEX_EC_LC;
    gex_AM_Index_t ai = GEX_AM_INDEX_BASE;
    gex_AM_Fn_t fp = (gex_AM_Fn_t)h_reply;
    (void)rv; (void)arg; (void)addr; (void)ti; (void)ec; (void)ai; (void)fp; (void)GEX_EVENT_NO_OP;
    if (me == 0)
        printf("names.c: ok: %s %s, %s; %u ranks; limits %zu; %lu us, %.3f, %llx, %d cpus, %u %s\n",
               gasnet_ErrorName(GASNET_ERR_NOT_READY), gasnet_ErrorDesc(GASNET_OK), cfg, (unsigned)ranks, lim,
               (unsigned long)us, g, (unsigned long long)sum, cpus, (unsigned)cnt, info[idx].gex_jobrank == me ? "self" : "?");
    fflush(stdout);
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(0);
    return 0;
}
