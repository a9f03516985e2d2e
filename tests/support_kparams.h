/* Test support: a kernel's parameter list, by name.
 *
 * The suites that check what the library passes at launch compare it with the
 * parameters the kernels declare: either as tools/gen_abi.py --params prints
 * them (names, packed offsets and sizes, total) or parsed straight from the
 * `.entry` declaration of a .ptx file (names and sizes).  Symbols are
 * prefixed tsupport_. */
#ifndef FP4LR_TESTS_SUPPORT_KPARAMS_H
#define FP4LR_TESTS_SUPPORT_KPARAMS_H

#include <stddef.h>

#define TSUPPORT_MAX_PARAMS 32

typedef struct tsupport_kparams {
    int count;
    char name[TSUPPORT_MAX_PARAMS][32];
    size_t offset[TSUPPORT_MAX_PARAMS]; /* packed offsets (gen_abi.py only) */
    size_t bytes[TSUPPORT_MAX_PARAMS];
    size_t total;                       /* the packed area (gen_abi.py only) */
} tsupport_kparams;

/* The layout of one family key ("sm90a_fused_c1", ...) from
 * `python3 tools/gen_abi.py --params <key>` (run from the repository root). */
void tsupport_kparams_from_gen_abi(const char *key, tsupport_kparams *k);

/* The `.entry <entry>(...)` parameter list of the .ptx file at `path`:
 * `.b8 name[n]` is n bytes, a scalar its type's width. */
void tsupport_kparams_from_ptx(const char *path, const char *entry, tsupport_kparams *k);

/* The index of parameter `name`; fails the test when there is none. */
int tsupport_kparams_index(const tsupport_kparams *k, const char *name);

/* A kernel parameter and the struct field the library passes for it. */
typedef struct tsupport_field {
    const char *param;
    size_t offset, size;
} tsupport_field;

/* The fused family's eleven parameters after the dense ten, in kernel order, as fields of
 * fp4lr_lowrank_params (both architectures: add the offset of the params struct's `lr`). */
#define TSUPPORT_LOWRANK_FIELDS 11
extern const tsupport_field tsupport_lowrank_fields[TSUPPORT_LOWRANK_FIELDS];

#endif
