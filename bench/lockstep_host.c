/* One side of bench/lockstep_host.py: a C process making llama-bench's decode calls, one step per byte read on stdin.
 * Usage: lockstep_host MODEL THREADS DEPTH STEPS. Prints "ready" once the context holds DEPTH tokens, then each
 * step's seconds (llama_decode of one random token and llama_synchronize), a line each, until stdin closes. */
#include "llama.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void quiet(enum ggml_log_level level, const char * text, void * data) { (void) level; (void) text; (void) data; }

int main(int argc, char ** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL THREADS DEPTH STEPS\n", argv[0]);
        return 2;
    }
    const int threads = atoi(argv[2]), depth = atoi(argv[3]), steps = atoi(argv[4]);
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params model_params = llama_model_default_params();
    model_params.n_gpu_layers = 0;
    struct llama_model * model = llama_model_load_from_file(argv[1], model_params);
    if (!model) return 1;
    struct llama_context_params params = llama_context_default_params();
    params.n_ctx = depth + steps + 16;  /* as llama-bench sizes it: the depth and the steps */
    params.n_batch = 2048;
    params.n_ubatch = 512;
    params.n_threads = params.n_threads_batch = threads;
    struct llama_context * ctx = llama_init_from_model(model, params);
    if (!ctx) return 1;
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token * context = malloc(sizeof(llama_token) * depth);
    for (int i = 0; i < depth; i++) context[i] = rand() % n_vocab;
    if (llama_decode(ctx, llama_batch_get_one(context, depth)) != 0) return 1;
    llama_synchronize(ctx);
    printf("ready\n");
    fflush(stdout);
    char go;
    llama_token token[1];
    while (read(0, &go, 1) == 1) {
        token[0] = rand() % n_vocab;
        const double started = seconds();
        llama_decode(ctx, llama_batch_get_one(token, 1));
        llama_synchronize(ctx);
        printf("%.9f\n", seconds() - started);
        fflush(stdout);
    }
    return 0;
}
