/* How a C program ends (argv[1]): "return" returns 3 from main without
 * gasnet_exit on every rank; "one" has rank 1 call gasnet_exit(5) while
 * the others wait in a barrier; "exit" calls exit(4) on every rank;
 * "minus" calls gasnet_exit(-1) on every rank (the job exits 255);
 * "handler" has rank 0 send rank 1 a request whose handler calls
 * gasnet_exit(6) while every rank polls; "reply" does the same from the
 * handler of rank 1's reply to rank 0. The job's exit code must be that
 * code. "batch" has rank 0 send rank 1 that request and call
 * gasnet_exit(6) at once, while rank 1 sleeps before it polls: the request
 * and rank 0's exit message reach rank 1 in one batch of completions, and
 * the exit that the request's handler starts must still see the exit
 * message queued behind it. */
#include <gasnetex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void exit_from_request(gex_Token_t t) {
    (void)t;
    gasnet_exit(6);
}

static void exit_from_reply(gex_Token_t t) {
    (void)t;
    gasnet_exit(7);
}

static void ask_for_reply(gex_Token_t t) {
    gex_AM_ReplyShort0(t, 202, 0);
}

int main(int argc, char **argv) {
    gex_Client_t c; gex_EP_t ep; gex_TM_t tm;
    const char *mode = argc > 1 ? argv[1] : "return";
    if (gex_Client_Init(&c, &ep, &tm, "EXITTEST", &argc, &argv, 0) != GASNET_OK) return 1;
    gex_Rank_t me = gex_TM_QueryRank(tm);
    printf("exit.c: rank %u: %s\n", (unsigned)me, mode);
    fflush(stdout);
    if (!strcmp(mode, "one")) {
        if (me == 1) gasnet_exit(5);
        gex_Coll_BarrierBlocking(tm, 0);
        printf("exit.c: rank %u passed a barrier rank 1 never entered\n", (unsigned)me);
        return 0;
    }
    if (!strcmp(mode, "handler") || !strcmp(mode, "reply") || !strcmp(mode, "batch")) {
        gex_AM_Entry_t hs[3] = {
            {200, (gex_AM_Fn_t)exit_from_request, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "exit"},
            {201, (gex_AM_Fn_t)ask_for_reply, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REQUEST, 0, NULL, "ask"},
            {202, (gex_AM_Fn_t)exit_from_reply, GEX_FLAG_AM_SHORT | GEX_FLAG_AM_REPLY, 0, NULL, "exit"}};
        if (gex_EP_RegisterHandlers(ep, hs, 3) != GASNET_OK) return 1;
        gex_Coll_BarrierBlocking(tm, 0);
        if (!strcmp(mode, "batch")) {
            if (me == 0) {
                gex_AM_RequestShort0(tm, 1, 200, 0);
                gasnet_exit(6);
            }
            if (me == 1) sleep(1);
        } else if (me == 0) {
            gex_AM_RequestShort0(tm, 1, !strcmp(mode, "handler") ? 200 : 201, 0);
        }
        for (;;) gasnet_AMPoll();
    }
    gex_Coll_BarrierBlocking(tm, 0);
    if (!strcmp(mode, "exit")) exit(4);
    if (!strcmp(mode, "minus")) gasnet_exit(-1);
    return 3;
}
