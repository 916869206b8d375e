/* The C API's latencies, measured as gex-bench measures the Rust API's
 * (bench/src/run/steps.rs): rank 0 times ITERS AM Short round trips (a
 * request with 2 arguments answered by a Short reply with 2 arguments,
 * each waited for) after ITERS/10 (10..1000) warm-up ones, and ITERS
 * 8-byte blocking puts to rank 1 after 1000 warm-up puts, while rank 1
 * polls until rank 0 ends the step; REPS repetitions, one line per figure
 * and repetition:
 *
 *   c-api: rep R: X us per round trip
 *   c-api: rep R: blocking put 8 B: Y us
 *
 * Run: gasnetrun-ofi -n 2 pingpong [ITERS [REPS [rtt|put|both]]];
 * scripts/bench-capi.sh runs each figure in a job of its own, as gex-bench
 * does with --tests am and --tests rma. */
#include <gasnetex.h>
#include <gasnet_tools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gex_TM_t tm;
static volatile uint64_t pongs;
static volatile int steps;
static gex_AM_Index_t H_PONG = 201, H_PING = 200, H_STEP = 202;

static void ping(gex_Token_t t, gex_AM_Arg_t a, gex_AM_Arg_t b) { gex_AM_ReplyShort2(t, H_PONG, 0, a, b); }
static void pong(gex_Token_t t, gex_AM_Arg_t a, gex_AM_Arg_t b) { (void)t; (void)a; (void)b; pongs++; }
static void step(gex_Token_t t, gex_AM_Arg_t s) { (void)t; steps = s; }

/* The end of a measured step, as gex-bench ends one: rank 0 tells rank 1,
 * which polls (GASNET_BLOCKUNTIL) until told. */
static void step_end(int me, int s) {
    if (me == 0) gex_AM_RequestShort1(tm, 1, H_STEP, 0, s);
    else GASNET_BLOCKUNTIL(steps >= s);
}

static double round_trips(int n) {
    gasnett_tick_t t0 = gasnett_ticks_now();
    for (int i = 0; i < n; i++) {
        uint64_t want = pongs + 1;
        gex_AM_RequestShort2(tm, 1, H_PING, 0, i, 0x5a5a5a5a);
        GASNET_BLOCKUNTIL(pongs >= want);
    }
    return (double)gasnett_ticks_to_ns(gasnett_ticks_now() - t0) / 1e3 / (n > 0 ? n : 1);
}

int main(int argc, char **argv) {
    gex_Client_t client; gex_EP_t ep; gex_Segment_t seg;
    if (gex_Client_Init(&client, &ep, &tm, "PINGPONG", &argc, &argv, 0) != GASNET_OK) return 1;
    int iters = argc > 1 ? atoi(argv[1]) : 50000, reps = argc > 2 ? atoi(argv[2]) : 5;
    const char *which = argc > 3 ? argv[3] : "both";
    int do_rtt = strcmp(which, "put") != 0, do_put = strcmp(which, "rtt") != 0;
    if (iters < 1 || reps < 1 || (!do_rtt && !do_put) || (strcmp(which, "both") && strcmp(which, "rtt") && strcmp(which, "put"))) {
        fprintf(stderr, "pingpong: usage: pingpong [ITERS>0 [REPS>0 [rtt|put|both]]], not '%s %s %s'\n",
                argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "", which);
        gasnet_exit(2);
    }
    if (gex_TM_QuerySize(tm) != 2) { fprintf(stderr, "pingpong: run with 2 ranks\n"); gasnet_exit(2); }
    if (gex_Segment_Attach(&seg, tm, 1 << 20) != GASNET_OK) return 1;
    gex_AM_Entry_t e[3] = {{H_PING, ping, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 2, NULL, "ping"},
                           {H_PONG, pong, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 2, NULL, "pong"},
                           {H_STEP, step, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 1, NULL, "step"}};
    if (gex_EP_RegisterHandlers(ep, e, 3) != GASNET_OK) return 1;
    int me = (int)gex_TM_QueryRank(tm);
    void *peer; gex_EP_QueryBoundSegmentNB(tm, 1, &peer, NULL, NULL, 0);
    unsigned char buf[8] = {0};
    for (int rep = 1; rep <= reps; rep++) {
        gex_Coll_BarrierBlocking(tm, 0);
        if (do_rtt && me == 0) {
            int warm = iters / 10 < 10 ? 10 : iters / 10 > 1000 ? 1000 : iters / 10;
            round_trips(warm);
            printf("c-api: rep %d: %.3f us per round trip\n", rep, round_trips(iters));
            fflush(stdout);
        }
        if (do_rtt) step_end(me, 2 * rep - 1);
        gex_Coll_BarrierBlocking(tm, 0);
        if (do_put && me == 0) {
            for (int i = 0; i < 1000; i++) gex_RMA_PutBlocking(tm, 1, peer, buf, 8, 0);
            gasnett_tick_t t0 = gasnett_ticks_now();
            for (int i = 0; i < iters; i++) {
                buf[0] = (unsigned char)i;
                gex_RMA_PutBlocking(tm, 1, peer, buf, 8, 0);
            }
            double us = (double)gasnett_ticks_to_ns(gasnett_ticks_now() - t0) / 1e3 / iters;
            printf("c-api: rep %d: blocking put 8 B: %.3f us\n", rep, us);
            fflush(stdout);
        }
        if (do_put) step_end(me, 2 * rep);
    }
    gex_Coll_BarrierBlocking(tm, 0);
    gasnet_exit(0);
    return 0;
}
