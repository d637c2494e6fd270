/*
 * A small C surface over PocketSphinx for the WebAssembly build: one decoder per handle, fed 16 kHz
 * 16-bit mono PCM in whatever pieces arrive. Everything crosses the wasm boundary as ints and
 * pointers, so the TypeScript side (gpu-worker/src/perception/pocketsphinx/) needs no embind.
 *
 * Why a shim and not the library's own API through ccall: ps_init takes a cmd_ln_t built from
 * argv-style strings and ps_get_hyp returns a pointer into decoder memory with a score through an
 * out-parameter; keeping those in C makes the exported surface five flat functions.
 */
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/cmn.h>

typedef struct {
  ps_decoder_t *ps;
  cmd_ln_t *config;
  int32 score;
  int in_utt;
  /* The feature front end of venus_ps_cepstra, made on first use from the decoder's own
   * configuration (feat.params merged in by ps_init), so its cepstra are the decoder's. */
  fe_t *fe;
} venus_ps_t;

/*
 * The decoder's configuration: model paths, no log, no lattice pass (with a grammar it only costs
 * time), then `options`: space-separated "-name value" pairs (beams, penalties) so tuning needs no
 * rebuild. -remove_silence stays on (the caller decides utterance boundaries); the worker turns
 * -remove_noise off through `options` (DECODER_OPTIONS in recogniser-protocol.ts says why).
 */
static cmd_ln_t *make_config(const char *hmm, const char *dict, const char *options) {
  char *argv[64];
  int argc = 0;
  char *copy = strdup(options != NULL ? options : "");
  argv[argc++] = "-hmm";
  argv[argc++] = (char *)hmm;
  argv[argc++] = "-dict";
  argv[argc++] = (char *)dict;
  argv[argc++] = "-logfn";
  argv[argc++] = "/dev/null";
  argv[argc++] = "-bestpath";
  argv[argc++] = "no";
  for (char *tok = strtok(copy, " "); tok != NULL && argc < 63; tok = strtok(NULL, " ")) argv[argc++] = tok;
  cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, TRUE);
  free(copy);
  return config;
}

/* A decoder with no search selected yet; NULL on failure (bad model path, ...). */
static venus_ps_t *open_decoder(const char *hmm, const char *dict, const char *options) {
  venus_ps_t *h = calloc(1, sizeof(venus_ps_t));
  if (h == NULL) return NULL;
  h->config = make_config(hmm, dict, options);
  if (h->config == NULL) {
    free(h);
    return NULL;
  }
  h->ps = ps_init(h->config);
  if (h->ps == NULL) {
    cmd_ln_free_r(h->config);
    free(h);
    return NULL;
  }
  return h;
}

static venus_ps_t *search_or_close(venus_ps_t *h, int rv, const char *search) {
  if (rv < 0 || ps_set_search(h->ps, search) < 0) {
    ps_free(h->ps);
    cmd_ln_free_r(h->config);
    free(h);
    return NULL;
  }
  return h;
}

/*
 * hmm: folder with mdef, means, ... ; dict: the pronunciation dictionary; jsgf: the grammar text.
 * Returns NULL on failure (bad model path, a grammar word missing from the dictionary, ...).
 */
venus_ps_t *venus_ps_open(const char *hmm, const char *dict, const char *jsgf, const char *options) {
  venus_ps_t *h = open_decoder(hmm, dict, options);
  if (h == NULL) return NULL;
  return search_or_close(h, ps_set_jsgf_string(h->ps, "grammar", jsgf), "grammar");
}

/*
 * A phone-loop decoder (any sequence of phones, optionally weighted by a phone language model; pass
 * "" for none): an open-vocabulary yardstick for rejection. Measured at ~1 CPU-second per second of
 * audio in this build, too slow to run beside every stream; kept for offline checks.
 */
venus_ps_t *venus_ps_open_phones(const char *hmm, const char *dict, const char *phone_lm, const char *options) {
  venus_ps_t *h = open_decoder(hmm, dict, options);
  if (h == NULL) return NULL;
  int rv = phone_lm != NULL && phone_lm[0] != '\0' ? ps_set_allphone_file(h->ps, "phones", phone_lm)
                                                    : ps_set_allphone(h->ps, "phones", NULL);
  return search_or_close(h, rv, "phones");
}

/* Replaces the grammar between utterances (a deployed function extended the word list). */
int venus_ps_set_grammar(venus_ps_t *h, const char *jsgf) {
  if (h->in_utt) return -1;
  if (ps_set_jsgf_string(h->ps, "grammar", jsgf) < 0) return -1;
  return ps_set_search(h->ps, "grammar");
}

int venus_ps_start(venus_ps_t *h) {
  if (h->in_utt) ps_end_utt(h->ps);
  h->in_utt = 1;
  return ps_start_utt(h->ps);
}

/* Feeds n samples; returns the frames searched (negative on error). */
int venus_ps_process(venus_ps_t *h, const int16 *pcm, int n) {
  if (!h->in_utt) return -1;
  return ps_process_raw(h->ps, pcm, (size_t)n, FALSE, FALSE);
}

int venus_ps_in_speech(venus_ps_t *h) { return ps_get_in_speech(h->ps); }

int venus_ps_end(venus_ps_t *h) {
  if (!h->in_utt) return -1;
  h->in_utt = 0;
  return ps_end_utt(h->ps);
}

/* The current (partial, or after venus_ps_end final) hypothesis; NULL when none. The score (a log
 * likelihood in PocketSphinx's log base) is left for venus_ps_score. */
const char *venus_ps_hyp(venus_ps_t *h) {
  h->score = 0;
  return ps_get_hyp(h->ps, &h->score);
}

int venus_ps_score(venus_ps_t *h) { return h->score; }

/* Frames decoded so far in this utterance (100 per second of audio): normalises the score. */
int venus_ps_frames(venus_ps_t *h) { return ps_get_n_frames(h->ps); }

/* Posterior probability of the hypothesis in log base, where available (needs the lattice). */
int venus_ps_prob(venus_ps_t *h) { return ps_get_prob(h->ps); }

/*
 * Cepstra of a piece of audio without decoding it, for a caller that transforms features before the
 * search (venus_ps_process_cep). `start`: 1 begins a new utterance (the front end's overlap and
 * voice activity state reset); `last`: 1 flushes the final partial frame. Writes at most
 * `max_frames` frames of 13 floats to `out`; returns the frames written, negative on error.
 */
int venus_ps_cepstra(venus_ps_t *h, const int16 *pcm, int n, int start, int last, float *out, int max_frames) {
  if (h->fe == NULL) {
    h->fe = fe_init_auto_r(h->config);
    if (h->fe == NULL) return -1;
  }
  int ceplen = fe_get_output_size(h->fe);
  if (ceplen != 13) return -2;
  if (start) fe_start_utt(h->fe);
  mfcc_t *rows[64];
  int written = 0;
  size_t left = (size_t)n;
  const int16 *at = pcm;
  while (left > 0) {
    int32 nfr = max_frames - written;
    if (nfr <= 0) return -3;
    if (nfr > 64) nfr = 64;
    for (int i = 0; i < nfr; i++) rows[i] = out + (size_t)(written + i) * 13;
    int32 frameidx = 0;
    size_t before = left;
    if (fe_process_frames(h->fe, &at, &left, rows, &nfr, &frameidx) < 0) return -1;
    written += nfr;
    if (nfr == 0 && left == before) break; /* fewer samples than a frame: kept for the next call */
  }
  if (last) {
    if (written >= max_frames) return -3;
    int32 nfr = 0;
    fe_end_utt(h->fe, out + (size_t)written * 13, &nfr);
    written += nfr;
  }
  return written;
}

/* Searches `n` frames of 13 cepstra (from venus_ps_cepstra, possibly transformed); returns the
 * frames searched, negative on error. */
int venus_ps_process_cep(venus_ps_t *h, float *cep, int n) {
  if (!h->in_utt) return -1;
  mfcc_t *rows[64];
  int done = 0;
  while (done < n) {
    int k = n - done > 64 ? 64 : n - done;
    for (int i = 0; i < k; i++) rows[i] = cep + (size_t)(done + i) * 13;
    int rv = ps_process_cep(h->ps, rows, k, FALSE, FALSE);
    if (rv < 0) return rv;
    done += k;
  }
  return done;
}

/*
 * The decoder's running cepstral mean (live CMN), 13 floats. A fresh decoder starts from the
 * model's prior (feat.params' -cmninit), which fits the model's training recordings, not the voice
 * and level at hand; the worker sets it from the first audio of a stream's first utterance instead
 * (recogniser-worker.ts says why). Setting it also resets the mean's history to that vector.
 * Both return 0, or negative when the decoder has no 13-dimensional CMN.
 */
int venus_ps_set_cmn(venus_ps_t *h, const float *mean) {
  feat_t *feat = ps_get_feat(h->ps);
  if (feat == NULL || feat->cmn_struct == NULL || feat->cmn_struct->veclen != 13) return -1;
  mfcc_t vec[13];
  for (int i = 0; i < 13; i++) vec[i] = FLOAT2MFCC(mean[i]);
  cmn_live_set(feat->cmn_struct, vec);
  return 0;
}

int venus_ps_get_cmn(venus_ps_t *h, float *out) {
  feat_t *feat = ps_get_feat(h->ps);
  if (feat == NULL || feat->cmn_struct == NULL || feat->cmn_struct->veclen != 13) return -1;
  mfcc_t vec[13];
  cmn_live_get(feat->cmn_struct, vec);
  for (int i = 0; i < 13; i++) out[i] = MFCC2FLOAT(vec[i]);
  return 0;
}

void venus_ps_close(venus_ps_t *h) {
  if (h == NULL) return;
  if (h->fe != NULL) fe_free(h->fe);
  if (h->in_utt) ps_end_utt(h->ps);
  ps_free(h->ps);
  cmd_ln_free_r(h->config);
  free(h);
}
