/* End-to-end test program for causality (lapse_signal, LAPSE_WAIT_ON): a producer and
 * a consumer in ping-pong, each handing the other a token through a pipe.
 *
 * usage: e2e_causal procs|threads N PRODUCE_US CONSUME_US
 *        e2e_causal edges
 *
 * N rounds of: the producer works PRODUCE_US in span "produce", signals "batch" and
 * writes a byte; the consumer, in LAPSE_WAIT_ON("batch"), reads it, works CONSUME_US
 * in span "consume", signals "ack" and writes a byte back; the producer waits for it
 * in LAPSE_WAIT_ON("ack"). Before the first round the producer waits for the
 * consumer's signal "ready". Each wait begins before the byte that ends it is sent (the
 * consumer's first one before it tells the producer to start), so every wait blocks
 * and is ended by the signal of its round; the critical path is the consumer's start,
 * then produce, consume, produce, ... through both. "procs": the consumer is a forked
 * child (role "consumer"; the parent's role is "producer");
 * "threads": two threads of one process ("producer", "consumer"). Profiling comes
 * from the environment (LAPSE_PROFILE=1). Prints "producer PID TID" and "consumer PID
 * TID".
 *
 * "edges", on one thread: a signal "early" before the wait on it (a pair that did not
 * block), a wait on "never" that nothing signals (1 ms: unmatched), a signal "lonely"
 * that nothing waits for (unconsumed), inside span "edges". */
#include "lapse.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int rounds;
static long produce_us, consume_us;
static int to_consumer[2], to_producer[2];

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void put(int fd)
{
    char c = 'x';
    while (write(fd, &c, 1) != 1)
        if (errno != EINTR)
            _exit(3);
}

static void get(int fd)
{
    char c;
    while (read(fd, &c, 1) != 1)
        if (errno != EINTR)
            _exit(3);
}

static void say(const char *who)
{
    printf("%s %d %ld\n", who, (int)getpid(), (long)syscall(SYS_gettid));
    fflush(stdout);
}

static void producer(void)
{
    say("producer");
    {
        LAPSE_WAIT_ON("ready"); /* until the consumer waits for the first batch */
        put(to_consumer[1]);    /* this wait has begun: the consumer may signal "ready" */
        get(to_producer[0]);
    }
    for (int k = 0; k < rounds; k++) {
        {
            LAPSE_SCOPE("produce");
            sleep_us(produce_us);
        }
        /* the signal before the byte, the wait before it too: the signal precedes
         * the wake-up it causes, and each wait begins before its signal */
        lapse_signal("batch");
        LAPSE_WAIT_ON("ack");
        put(to_consumer[1]);
        get(to_producer[0]);
    }
}

static void consumer(void)
{
    say("consumer");
    for (int k = 0; k < rounds; k++) {
        {
            LAPSE_WAIT_ON("batch");
            if (k == 0) {
                /* not before the producer's wait for it began (a producer started late,
                 * as under load, would find "ready" signalled before its wait: not a
                 * blocking pair) */
                get(to_consumer[0]);
                lapse_signal("ready");
            }
            put(to_producer[1]); /* the first: "ready"; then the ack of the round before */
            get(to_consumer[0]);
        }
        {
            LAPSE_SCOPE("consume");
            sleep_us(consume_us);
        }
        lapse_signal("ack");
    }
    put(to_producer[1]);
}

static void *consumer_thread(void *arg)
{
    (void)arg;
    lapse_set_thread_name("consumer");
    consumer();
    return NULL;
}

static int edges(void)
{
    LAPSE_SCOPE("edges");
    lapse_signal("early");
    {
        LAPSE_WAIT_ON("early");
    }
    {
        LAPSE_WAIT_ON("never");
        sleep_us(1000);
    }
    lapse_signal("lonely");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "edges"))
        return edges();
    if (argc != 5 || (strcmp(argv[1], "procs") && strcmp(argv[1], "threads"))) {
        fprintf(stderr, "usage: e2e_causal procs|threads N PRODUCE_US CONSUME_US | edges\n");
        return 2;
    }
    rounds = atoi(argv[2]);
    produce_us = atol(argv[3]);
    consume_us = atol(argv[4]);
    if (pipe(to_consumer) || pipe(to_producer))
        return 3;
    if (!strcmp(argv[1], "threads")) {
        lapse_set_thread_name("producer");
        pthread_t t;
        if (pthread_create(&t, NULL, consumer_thread, NULL))
            return 3;
        producer();
        pthread_join(t, NULL);
        return 0;
    }
    lapse_set_role("producer");
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        lapse_set_role("consumer");
        consumer();
        lapse_stop();
        _exit(0);
    }
    producer();
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 4;
    return 0;
}
