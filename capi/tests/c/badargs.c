/* Bad arguments to the GASNet-EX C API, one per run (argv[1] names it):
 * each must give GASNet's error code with a message naming the call and
 * the argument, or a fatal error that ends the job, never undefined
 * behaviour. Rank 0 makes the bad call; the test suite checks the text. */
#include <gasnet.h>
#include <gasnet_coll.h>
#include <gasnetex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static gex_Token_t saved;
static void keep_token(gex_Token_t t) { saved = t; }
static void nop(gex_Token_t t) { (void)t; }
static gex_TM_t the_tm;
static void requests(gex_Token_t t) { (void)t; gex_AM_RequestShort0(the_tm, 0, 201, 0); }
static void tries_barrier(gex_Token_t t) { (void)t; gasnet_barrier_try(0, GASNET_BARRIERFLAG_ANONYMOUS); }

static void *other_thread(void *arg) { (void)arg; printf("%u\n", (unsigned)gex_System_QueryJobRank()); return NULL; }
static void report(const char *what, int rc) { printf("badargs: %s returned %s\n", what, gasnet_ErrorName(rc)); fflush(stdout); }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    gex_Client_t client; gex_EP_t ep; gex_TM_t tm; gex_Segment_t seg;
    if (!strcmp(mode, "before-init")) { printf("%u\n", (unsigned)gex_System_QueryJobRank()); return 0; }
    if (!strcmp(mode, "init-null")) { report("gex_Client_Init", gex_Client_Init(NULL, &ep, &tm, "BAD", &argc, &argv, 0)); return 0; }
    if (!strcmp(mode, "init-name")) { report("gex_Client_Init", gex_Client_Init(&client, &ep, &tm, "bad-name", &argc, &argv, 0)); return 0; }
    if (gex_Client_Init(&client, &ep, &tm, "BADARGS", &argc, &argv, 0) != GASNET_OK) return 1;
    gex_Rank_t me = gex_TM_QueryRank(tm), n = gex_TM_QuerySize(tm);
    if (gex_Segment_Attach(&seg, tm, 65536) != GASNET_OK) return 1;
    the_tm = tm;
    gex_AM_Entry_t ok[4] = {{200, keep_token, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "keep"},
                            {201, nop, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 2, NULL, "nop"},
                            {202, requests, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "requests"},
                            {203, tries_barrier, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "tries_barrier"}};
    if (gex_EP_RegisterHandlers(ep, ok, 4) != GASNET_OK) return 1;
    gex_Coll_BarrierBlocking(tm, 0);
    void *peer; uintptr_t psize;
    gex_EP_QueryBoundSegmentNB(tm, (me + 1) % n, &peer, NULL, &psize, 0);
    char buf[64] = {0};
    gex_AD_t ad = GEX_AD_INVALID;
    if (!strcmp(mode, "ad-op") || !strcmp(mode, "ad-outside") || !strcmp(mode, "ad-type") || !strcmp(mode, "ad-result") || !strcmp(mode, "ad-misaligned")) gex_AD_Create(&ad, tm, GEX_DT_U64, GEX_OP_FADD | GEX_OP_GET, 0);
    if (!strcmp(mode, "coll1-flags") || !strcmp(mode, "coll1-unknown-flag") || !strcmp(mode, "coll1-nbytes") || !strcmp(mode, "coll1-srcimage") || !strcmp(mode, "coll1-init-twice"))
        gasnet_coll_init(NULL, 0, NULL, 0, 0);
    /* A team destroyed by both ranks (collective), for the cases that
     * use it afterwards; an event of it left unsynced. */
    /* A destroyed domain, then one of the same shape (which may take the
     * freed one's address): the stale handle must still be refused. */
    gex_AD_t dead_ad = GEX_AD_INVALID, live_ad[16];
    int reused = 0;
    if (!strcmp(mode, "ad-destroyed")) {
        gex_AD_Create(&dead_ad, tm, GEX_DT_U64, GEX_OP_FADD, 0);
        gex_AD_Destroy(dead_ad);
        for (int i = 0; i < 16; i++) {
            gex_AD_Create(&live_ad[i], tm, GEX_DT_U64, GEX_OP_FADD, 0);
            reused |= live_ad[i] == dead_ad;
        }
    }
    gex_TM_t dead = GEX_TM_INVALID;
    gex_Event_t dead_ev = GEX_EVENT_INVALID;
    static uint64_t dead_src = 1, dead_dst;
    if (!strcmp(mode, "tm-destroyed") || !strcmp(mode, "tm-destroyed-event")) {
        gex_TM_Split(&dead, tm, 0, 0, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        if (!strcmp(mode, "tm-destroyed-event"))
            dead_ev = gex_Coll_ReduceToAllNB(dead, &dead_dst, &dead_src, GEX_DT_U64, 8, 1, GEX_OP_ADD, NULL, NULL, 0);
        gex_TM_Destroy(dead, NULL, 0);
    }
    if (me == 0) {
        if (!strcmp(mode, "handler-index")) {
            gex_AM_Entry_t e = {5, nop, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "low"};
            report("gex_EP_RegisterHandlers", gex_EP_RegisterHandlers(ep, &e, 1));
        } else if (!strcmp(mode, "handler-nargs")) {
            gex_AM_Entry_t e = {0, nop, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 17, NULL, "many"};
            report("gex_EP_RegisterHandlers", gex_EP_RegisterHandlers(ep, &e, 1));
        } else if (!strcmp(mode, "handler-flags")) {
            gex_AM_Entry_t e = {0, nop, GEX_FLAG_AM_REQUEST, 0, NULL, "nocat"};
            report("gex_EP_RegisterHandlers", gex_EP_RegisterHandlers(ep, &e, 1));
        } else if (!strcmp(mode, "handler-taken")) {
            gex_AM_Entry_t e = {200, nop, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "again"};
            report("gex_EP_RegisterHandlers", gex_EP_RegisterHandlers(ep, &e, 1));
        } else if (!strcmp(mode, "handler-null")) {
            gex_AM_Entry_t e = {0, NULL, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, NULL};
            report("gex_EP_RegisterHandlers", gex_EP_RegisterHandlers(ep, &e, 1));
        } else if (!strcmp(mode, "waitmode")) {
            report("gasnet_set_waitmode", gasnet_set_waitmode(7));
        } else if (!strcmp(mode, "put-outside")) {
            gex_RMA_PutBlocking(tm, (me + 1) % n, (char *)peer + psize - 8, buf, 16, 0);
        } else if (!strcmp(mode, "get-null")) {
            gex_RMA_GetBlocking(tm, NULL, (me + 1) % n, peer, 8, 0);
        } else if (!strcmp(mode, "tm-invalid")) {
            gex_RMA_PutBlocking(GEX_TM_INVALID, 0, peer, buf, 8, 0);
        } else if (!strcmp(mode, "rank")) {
            gex_AM_RequestShort0(tm, n, 200, 0);
        } else if (!strcmp(mode, "long-outside")) {
            gex_AM_RequestLong0(tm, (me + 1) % n, 200, buf, 8, (char *)peer - 64, GEX_EVENT_NOW, 0);
        } else if (!strcmp(mode, "lc-defer")) {
            gex_AM_RequestMedium0(tm, (me + 1) % n, 200, buf, 8, GEX_EVENT_DEFER, 0);
        } else if (!strcmp(mode, "medium-huge")) {
            gex_AM_RequestMedium0(tm, (me + 1) % n, 200, buf, (size_t)-1, GEX_EVENT_NOW, 0);
        } else if (!strcmp(mode, "token-stale")) {
            gex_AM_RequestShort0(tm, me, 200, 0);
            GASNET_BLOCKUNTIL(saved != NULL);
            gex_AM_ReplyShort0(saved, 200, 0);
        } else if (!strcmp(mode, "tm-destroyed")) {
            gex_Coll_BarrierNB(dead, 0);
        } else if (!strcmp(mode, "tm-destroyed-event")) {
            gex_Event_Wait(dead_ev);
        } else if (!strcmp(mode, "tm-destroy-world")) {
            gex_TM_Destroy(tm, NULL, 0);
        } else if (!strcmp(mode, "prepare-oom")) {
            /* Address space for 256 MiB more than the process maps: the
             * conduit's own buffer for a 2 GiB Long cannot be had. */
            unsigned long pages = 0;
            FILE *f = fopen("/proc/self/statm", "r");
            if (!f || fscanf(f, "%lu", &pages) != 1) return 1;
            fclose(f);
            struct rlimit rl = {(rlim_t)pages * 4096 + (256u << 20), RLIM_INFINITY};
            if (getrlimit(RLIMIT_AS, &rl) == 0) rl.rlim_cur = (rlim_t)pages * 4096 + (256u << 20);
            if (setrlimit(RLIMIT_AS, &rl) != 0) return 1;
            size_t max = gex_AM_MaxRequestLong(tm, (me + 1) % n, GEX_EVENT_NOW, 0, 0);
            gex_AM_PrepareRequestLong(tm, (me + 1) % n, NULL, max, max, peer, NULL, 0, 0);
        } else if (!strcmp(mode, "prepare-numargs")) {
            gex_AM_PrepareRequestMedium(tm, (me + 1) % n, NULL, 8, 8, NULL, 0, 17);
        } else if (!strcmp(mode, "commit-size")) {
            gex_AM_SrcDesc_t sd = gex_AM_PrepareRequestMedium(tm, (me + 1) % n, NULL, 8, 8, NULL, 0, 0);
            gex_AM_CommitRequestMedium0(sd, 200, 9);
        } else if (!strcmp(mode, "event-stale")) {
            gex_Event_t e = gex_RMA_GetNB(tm, buf, (me + 1) % n, peer, 64, 0);
            gex_Event_Wait(e);
            gex_Event_Wait(e);
        } else if (!strcmp(mode, "event-reused")) {
            /* e1's slot holds e2 once e1 completed: waiting for e1 again
             * must still be caught, and must not complete e2. */
            gex_Event_t e1 = gex_RMA_GetNB(tm, buf, (me + 1) % n, peer, 64, 0);
            gex_Event_Wait(e1);
            gex_Event_t e2 = gex_RMA_GetNB(tm, buf, (me + 1) % n, peer, 64, 0);
            gex_Event_Wait(e1);
            printf("badargs: the second wait for e1 returned\n");
            gex_Event_Wait(e2);
            gasnet_exit(0);
        } else if (!strcmp(mode, "event-no-op")) {
            report("gex_Event_Test", gex_Event_Test(GEX_EVENT_NO_OP));
        } else if (!strcmp(mode, "wrong-nargs")) {
            /* Only once rank 1 polls (it says so), so that the error meets
             * it in gasnet_AMPoll and not while it leaves the barrier. */
            GASNET_BLOCKUNTIL(saved != NULL);
            gex_AM_RequestShort1(tm, (me + 1) % n, 201, 0, 7);
        } else if (!strcmp(mode, "wrong-nargs-exit")) {
            /* Met by rank 1 inside the barrier below; rank 0 then exits
             * with 0 at once, which may reach rank 1 before it polls. */
            gex_AM_RequestShort1(tm, (me + 1) % n, 201, 0, 7);
        } else if (!strcmp(mode, "other-thread")) {
            pthread_t th;
            pthread_create(&th, NULL, other_thread, NULL);
            pthread_join(th, NULL);
        } else if (!strcmp(mode, "request-in-handler")) {
            gex_AM_RequestShort0(tm, (me + 1) % n, 202, 0);
        } else if (!strcmp(mode, "ad-op")) {
            uint64_t old;
            gex_AD_OpNB_U64(ad, &old, (me + 1) % n, peer, GEX_OP_FCAS, 0, 1, 0);
        } else if (!strcmp(mode, "ad-favor-two")) {
            gex_AD_Create(&ad, tm, GEX_DT_U64, GEX_OP_FADD, GEX_FLAG_AD_FAVOR_MY_RANK | GEX_FLAG_AD_FAVOR_REMOTE);
        } else if (!strcmp(mode, "ad-destroyed")) {
            uint64_t old;
            printf("ad-destroyed: %s\n", reused ? "a new domain took the destroyed one's address" : "no new domain took the destroyed one's address");
            fflush(stdout);
            gex_AD_OpNB_U64(dead_ad, &old, (me + 1) % n, peer, GEX_OP_FADD, 1, 0, 0);
        } else if (!strcmp(mode, "ad-invalid")) {
            gex_AD_OpNBI_U64(GEX_AD_INVALID, NULL, 0, peer, GEX_OP_SET, 1, 0, 0);
        } else if (!strcmp(mode, "ad-outside")) {
            uint64_t old;
            gex_AD_OpNB_U64(ad, &old, (me + 1) % n, (char *)peer + psize - 4, GEX_OP_FADD, 1, 0, 0);
        } else if (!strcmp(mode, "coll-root")) {
            gex_Coll_BroadcastNB(tm, n, buf, buf, 8, 0);
        } else if (!strcmp(mode, "reduce-op")) {
            gex_Coll_ReduceToAllNB(tm, buf, buf, GEX_DT_U64, 8, 1, GEX_OP_FADD, NULL, NULL, 0);
        } else if (!strcmp(mode, "reduce-size")) {
            gex_Coll_ReduceToAllNB(tm, buf, buf, GEX_DT_DBL, 4, 1, GEX_OP_ADD, NULL, NULL, 0);
        } else if (!strcmp(mode, "vis-outside")) {
            gex_Memvec_t src[1] = {{buf, 16}}, dst[2] = {{peer, 8}, {(char *)peer + psize - 4, 8}};
            gex_VIS_VectorPutBlocking(tm, (me + 1) % n, 2, dst, 1, src, 0);
        } else if (!strcmp(mode, "ad-type")) {
            int64_t old;
            gex_AD_OpNB_I64(ad, &old, (me + 1) % n, peer, GEX_OP_FADD, 1, 0, 0);
        } else if (!strcmp(mode, "ad-result")) {
            gex_AD_OpNB_U64(ad, NULL, (me + 1) % n, peer, GEX_OP_FADD, 1, 0, 0);
        } else if (!strcmp(mode, "vis-null")) {
            gex_Memvec_t src[2] = {{buf, 8}, {NULL, 8}}, dst[1] = {{peer, 16}};
            gex_VIS_VectorPutBlocking(tm, (me + 1) % n, 1, dst, 2, src, 0);
        } else if (!strcmp(mode, "reduce-count")) {
            gex_Coll_ReduceToAllNB(tm, buf, buf, GEX_DT_U64, 8, 0, GEX_OP_ADD, NULL, NULL, 0);
        } else if (!strcmp(mode, "reduce-user-dt")) {
            gex_Coll_ReduceToAllNB(tm, buf, buf, GEX_DT_USER, 12, 1, GEX_OP_ADD, NULL, NULL, 0);
        } else if (!strcmp(mode, "value-size")) {
            gex_RMA_PutBlockingVal(tm, (me + 1) % n, peer, 1, 9, 0);
        } else if (!strcmp(mode, "region-nested")) {
            gex_NBI_BeginAccessRegion(0);
            gex_NBI_BeginAccessRegion(0);
        } else if (!strcmp(mode, "region-end")) {
            gex_NBI_EndAccessRegion(0);
        } else if (!strcmp(mode, "ad-misaligned")) {
            uint64_t old;
            gex_AD_OpNB_U64(ad, &old, (me + 1) % n, (char *)peer + 4, GEX_OP_FADD, 1, 0, 0);
        } else if (!strcmp(mode, "reduce-user-null")) {
            gex_Coll_ReduceToAllNB(tm, buf, buf, GEX_DT_USER, 12, 1, GEX_OP_USER, NULL, NULL, 0);
        } else if (!strcmp(mode, "split-rank")) {
            gex_TM_TranslateRankToJobrank(tm, n);
        } else if (!strcmp(mode, "verbose-errors")) {
            gex_System_SetVerboseErrors(2);
        } else if (!strcmp(mode, "segment-handle")) {
            printf("%p\n", gex_Segment_QueryAddr((gex_Segment_t)(uintptr_t)ep));
        } else if (!strcmp(mode, "ep-location-flags")) {
            gex_TM_TranslateRankToEP(tm, 1, 1);
        } else if (!strcmp(mode, "pair-index")) {
            gex_TM_Pair(ep, 1);
        } else if (!strcmp(mode, "pair-team")) {
            printf("%u\n", (unsigned)gex_TM_QuerySize(gex_TM_Pair(ep, 0)));
        } else if (!strcmp(mode, "create-dup")) {
            gex_EP_Location_t l[2] = {{0, 0}, {0, 0}};
            gex_TM_t t;
            gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_RANK_IS_JOBRANK | GEX_FLAG_TM_NO_SCRATCH);
        } else if (!strcmp(mode, "create-rank")) {
            gex_EP_Location_t l[2] = {{0, 0}, {n, 0}};
            gex_TM_t t;
            gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        } else if (!strcmp(mode, "create-scratch")) {
            gex_EP_Location_t l[2] = {{0, 0}, {1, 0}};
            gex_TM_t t;
            gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_TM_NO_SCRATCH | GEX_FLAG_TM_LOCAL_SCRATCH);
        } else if (!strcmp(mode, "create-count")) {
            gex_EP_Location_t l[2] = {{0, 0}, {1, 0}};
            gex_TM_t t;
            gex_TM_Create(&t, 0, tm, l, 2, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        } else if (!strcmp(mode, "create-mismatch")) {
            /* Both ranks, below. */
        } else if (!strcmp(mode, "leaf-category")) {
            gex_Event_QueryLeaf(GEX_EVENT_INVALID, GEX_EC_PUT);
        } else if (!strcmp(mode, "legacy-index")) {
            gasnet_handlerentry_t e = {5, (void (*)())nop};
            report("gasnet_attach", gasnet_attach(&e, 1, GASNET_PAGESIZE, 0));
        } else if (!strcmp(mode, "legacy-segsize")) {
            report("gasnet_attach", gasnet_attach(NULL, 0, 1000, 0));
        } else if (!strcmp(mode, "tools-fatal")) {
            gasnett_fatalerror("boom");
        } else if (!strcmp(mode, "create-epindex")) {
            gex_EP_Location_t l[2] = {{0, 0}, {1, 3}};
            gex_TM_t t;
            gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
        } else if (!strcmp(mode, "create-jobrank")) {
            gex_EP_Location_t l[2] = {{0, 0}, {n, 0}};
            gex_TM_t t;
            gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_RANK_IS_JOBRANK | GEX_FLAG_TM_NO_SCRATCH);
        } else if (!strcmp(mode, "leaf-noop")) {
            gex_Event_QueryLeaf(GEX_EVENT_NO_OP, GEX_EC_LC);
        } else if (!strcmp(mode, "legacy-init-twice")) {
            report("gasnet_init", gasnet_init(&argc, &argv));
        } else if (!strcmp(mode, "legacy-seginfo-null")) {
            report("gasnet_getSegmentInfo", gasnet_getSegmentInfo(NULL, 2));
        } else if (!strcmp(mode, "legacy-nodeinfo-no-init")) {
            gasnet_nodeinfo_t ni[2];
            report("gasnet_getNodeInfo", gasnet_getNodeInfo(ni, 2));
        } else if (!strcmp(mode, "legacy-msgsource")) {
            gasnet_node_t src;
            gasnet_AMGetMsgSource(NULL, &src);
        } else if (!strcmp(mode, "barrier-try-in-handler")) {
            gex_AM_RequestShort0(tm, (me + 1) % n, 203, 0);
        } else if (!strcmp(mode, "coll1-no-init")) {
            gasnet_coll_broadcast(GASNET_TEAM_ALL, buf, 0, buf, 8, GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC);
        } else if (!strcmp(mode, "coll1-flags")) {
            gasnet_coll_broadcast_nb(GASNET_TEAM_ALL, buf, 0, buf, 8, GASNET_COLL_IN_ALLSYNC | GASNET_COLL_OUT_ALLSYNC);
        } else if (!strcmp(mode, "coll1-unknown-flag")) {
            gasnet_coll_broadcast(GASNET_TEAM_ALL, buf, 0, buf, 8, GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC | (1 << 20));
        } else if (!strcmp(mode, "coll1-nbytes")) {
            gasnet_coll_broadcast(GASNET_TEAM_ALL, buf, 0, buf, 0, GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC);
        } else if (!strcmp(mode, "coll1-srcimage")) {
            gasnet_coll_broadcast(GASNET_TEAM_ALL, buf, n, buf, 8, GASNET_COLL_LOCAL | GASNET_COLL_IN_MYSYNC | GASNET_COLL_OUT_MYSYNC);
        } else if (!strcmp(mode, "coll1-init-twice")) {
            gasnet_coll_init(NULL, 0, NULL, 0, 0);
        } else if (!strcmp(mode, "coll1-init-images")) {
            gasnet_image_t images[2] = {1, 1};
            gasnet_coll_init(images, 0, NULL, 0, 0);
        } else if (!strcmp(mode, "coll1-init-flags")) {
            gasnet_coll_init(NULL, 0, NULL, 0, 4);
        } else if (!strcmp(mode, "vis1-levels")) {
            size_t c[1] = {8};
            gasnet_puts_bulk((me + 1) % n, peer, NULL, buf, NULL, c, (size_t)-1);
        } else if (!strcmp(mode, "vis1-count-null")) {
            size_t strides[2] = {8, 16};
            gasnet_puts_bulk((me + 1) % n, peer, strides, buf, strides, NULL, 2);
        } else if (!strcmp(mode, "barrier-wait")) {
            gasnet_barrier_wait(0, 0);
        } else if (!strcmp(mode, "barrier-notify-flags")) {
            gasnet_barrier_notify(0, GASNET_BARRIERFLAG_MISMATCH | 0x100);
        } else if (!strcmp(mode, "coll-barrier-in-legacy")) {
            gasnet_barrier_notify(0, GASNET_BARRIERFLAG_ANONYMOUS);
            gex_Coll_BarrierNB(tm, 0);
        } else {
            printf("badargs: unknown mode '%s'\n", mode);
            gasnet_exit(2);
        }
    }
    if (!strcmp(mode, "create-mismatch")) {
        /* Rank 1 names the team in another order than rank 0. */
        gex_EP_Location_t l[2] = {{me, 0}, {1 - me, 0}};
        gex_TM_t t;
        gex_TM_Create(&t, 1, tm, l, 2, NULL, 0, GEX_FLAG_TM_NO_SCRATCH);
    }
    /* The receiver of the malformed AM polls until it reports it. */
    if (me == 1 && !strcmp(mode, "wrong-nargs")) {
        gex_AM_RequestShort0(tm, 0, 200, 0);
        for (;;) gasnet_AMPoll();
    }
    gasnet_barrier(0, GASNET_BARRIERFLAG_ANONYMOUS);
    gasnet_exit(0);
    return 0;
}
