;; The polyphase FIR inner loop of StreamingResampler, with 128-bit SIMD (four f32 lanes).
;; Source of fir-kernel-wasm.ts: `npm run build:wasm` assembles it (wabt) into that file.
;;
;; fir(coef, kp, buf, out, at, phase, end, up, down) -> outputs written
;;   coef   byte offset of the coefficients: `up` phases of `kp` f32 taps each, every phase stored
;;          oldest-sample-first (time-reversed) and zero-padded at the front to a multiple of 4
;;   buf    byte offset of the input window, f32 samples; buf[at] is the newest sample one output uses
;;   out    byte offset where the i16 outputs go
;;   at     index in buf of the newest input sample of the first output
;;   phase  its phase (0 <= phase < up)
;;   end    outputs are made while at < end (end = samples in buf)
;;   up, down  the rational ratio: each output advances the phase by `down` in steps of 1/up sample
(module
  (memory (export "memory") 1)
  (func (export "fir")
    (param $coef i32) (param $kp i32) (param $buf i32) (param $out i32)
    (param $at i32) (param $phase i32) (param $end i32) (param $up i32) (param $down i32)
    (result i32)
    (local $produced i32) (local $c i32) (local $cEnd i32) (local $x i32)
    (local $acc v128) (local $acc2 v128) (local $acc3 v128) (local $acc4 v128) (local $cEnd4 i32) (local $r i32)
    (block $done
      (loop $outputs
        (br_if $done (i32.ge_s (local.get $at) (local.get $end)))
        (local.set $c
          (i32.add (local.get $coef) (i32.shl (i32.mul (local.get $phase) (local.get $kp)) (i32.const 2))))
        (local.set $cEnd (i32.add (local.get $c) (i32.shl (local.get $kp) (i32.const 2))))
        ;; the window ends at buf[at]: it starts kp - 1 samples earlier
        (local.set $x
          (i32.add (local.get $buf)
            (i32.shl (i32.add (i32.sub (local.get $at) (local.get $kp)) (i32.const 1)) (i32.const 2))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $acc2 (v128.const i32x4 0 0 0 0))
        (local.set $acc3 (v128.const i32x4 0 0 0 0))
        (local.set $acc4 (v128.const i32x4 0 0 0 0))
        ;; four vectors a step into four sums: one running sum would wait on its own add every step
        (local.set $cEnd4 (i32.sub (local.get $cEnd) (i32.const 48)))
        (block $wide
          (loop $taps4
            (br_if $wide (i32.ge_u (local.get $c) (local.get $cEnd4)))
            (local.set $acc
              (f32x4.add (local.get $acc) (f32x4.mul (v128.load (local.get $c)) (v128.load (local.get $x)))))
            (local.set $acc2
              (f32x4.add (local.get $acc2)
                (f32x4.mul (v128.load offset=16 (local.get $c)) (v128.load offset=16 (local.get $x)))))
            (local.set $acc3
              (f32x4.add (local.get $acc3)
                (f32x4.mul (v128.load offset=32 (local.get $c)) (v128.load offset=32 (local.get $x)))))
            (local.set $acc4
              (f32x4.add (local.get $acc4)
                (f32x4.mul (v128.load offset=48 (local.get $c)) (v128.load offset=48 (local.get $x)))))
            (local.set $c (i32.add (local.get $c) (i32.const 64)))
            (local.set $x (i32.add (local.get $x) (i32.const 64)))
            (br $taps4)))
        ;; the last one to three vectors
        (block $tail
          (loop $taps
            (br_if $tail (i32.ge_u (local.get $c) (local.get $cEnd)))
            (local.set $acc
              (f32x4.add (local.get $acc) (f32x4.mul (v128.load (local.get $c)) (v128.load (local.get $x)))))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (local.set $x (i32.add (local.get $x) (i32.const 16)))
            (br $taps)))
        (local.set $acc
          (f32x4.add (f32x4.add (local.get $acc) (local.get $acc2)) (f32x4.add (local.get $acc3) (local.get $acc4))))
        ;; round to nearest, then clamp to the i16 range
        (local.set $r
          (i32.trunc_sat_f32_s
            (f32.nearest
              (f32.add
                (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))))
        (local.set $r (select (i32.const 32767) (local.get $r) (i32.gt_s (local.get $r) (i32.const 32767))))
        (local.set $r (select (i32.const -32768) (local.get $r) (i32.lt_s (local.get $r) (i32.const -32768))))
        (i32.store16 (i32.add (local.get $out) (i32.shl (local.get $produced) (i32.const 1))) (local.get $r))
        (local.set $produced (i32.add (local.get $produced) (i32.const 1)))
        (local.set $phase (i32.add (local.get $phase) (local.get $down)))
        (local.set $at (i32.add (local.get $at) (i32.div_u (local.get $phase) (local.get $up))))
        (local.set $phase (i32.rem_u (local.get $phase) (local.get $up)))
        (br $outputs)))
    (local.get $produced)))
