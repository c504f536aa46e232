;; Whether any of the first `length` bytes of memory is below 0x20 (a control character, which
;; a JSON string must escape). Sixteen bytes to a compare, 64 to a branch; the rest one by one.
;; control-bytes.ts embeds this module's binary; test/unit/control-bytes.test.ts compiles this
;; text with wabt and fails when the two differ.
(module
  (memory (export "memory") 1)
  (func (export "hasControlByte") (param $length i32) (result i32)
    (local $at i32)
    (local $limit v128)
    (local.set $limit (i8x16.splat (i32.const 0x20)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_u (i32.add (local.get $at) (i32.const 64)) (local.get $length)))
        (if (v128.any_true
              (v128.or
                (v128.or
                  (i8x16.lt_u (v128.load offset=0 (local.get $at)) (local.get $limit))
                  (i8x16.lt_u (v128.load offset=16 (local.get $at)) (local.get $limit)))
                (v128.or
                  (i8x16.lt_u (v128.load offset=32 (local.get $at)) (local.get $limit))
                  (i8x16.lt_u (v128.load offset=48 (local.get $at)) (local.get $limit)))))
          (then (return (i32.const 1))))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $blocks)))
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $at) (local.get $length)))
        (if (i32.lt_u (i32.load8_u (local.get $at)) (i32.const 0x20))
          (then (return (i32.const 1))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $bytes)))
    (i32.const 0)))
