/* Test support: kernel parameter lists from gen_abi.py or a .ptx .entry. */
#include "support_kparams.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowrank_params.h"
#include "support_cmd.h"

#define LRF(name, f) {name, offsetof(fp4lr_lowrank_params, f), sizeof(((fp4lr_lowrank_params *)0)->f)}
const tsupport_field tsupport_lowrank_fields[TSUPPORT_LOWRANK_FIELDS] = {
    LRF("p_tmL", tmL),         LRF("p_tmU", tmU),           LRF("p_wc", wc),
    LRF("p_beta", beta),       LRF("p_N", N),               LRF("p_lora_chunks", chunks),
    LRF("p_lora_slots", slots), LRF("p_lora_sub", sub),     LRF("p_lora_ksteps", ksteps),
    LRF("p_lora_wk", wk),      LRF("p_lora_deschi", deschi),
};
#undef LRF

void tsupport_kparams_from_gen_abi(const char *key, tsupport_kparams *k)
{
    char cmd[256], text[4096];
    snprintf(cmd, sizeof cmd, "python3 tools/gen_abi.py --params %s", key);
    cr_assert_eq(tsupport_run_capture(cmd, text, sizeof text), 0, "%s failed (run the tests from the repository root)",
                 cmd);
    memset(k, 0, sizeof *k);
    /* one "name offset bytes" line per parameter, then "total N" */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (sscanf(line, "total %zu", &k->total) == 1)
            break;
        cr_assert_lt(k->count, TSUPPORT_MAX_PARAMS);
        cr_assert_eq(sscanf(line, "%31s %zu %zu", k->name[k->count], &k->offset[k->count], &k->bytes[k->count]), 3,
                     "unexpected line '%s' from %s", line, cmd);
        k->count++;
    }
    cr_assert_gt(k->total, 0, "%s printed no total", cmd);
}

/* Bytes of one `.param` declaration: `.b8 name[n]` is n, a scalar its type's width. */
static size_t param_bytes(const char *type, const char *decl)
{
    const char *bracket = strchr(decl, '[');
    if (bracket)
        return (size_t)strtoul(bracket + 1, NULL, 10);
    int bits = atoi(type + 2); /* ".u32", ".f32", ".b64", ... */
    cr_assert_gt(bits, 0, "unexpected parameter type %s", type);
    return (size_t)bits / 8;
}

void tsupport_kparams_from_ptx(const char *path, const char *entry, tsupport_kparams *k)
{
    char line[512], head[160];
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot read %s (run the tests from the repository root)", path);
    snprintf(head, sizeof head, ".entry %s(", entry);
    memset(k, 0, sizeof *k);
    int in_entry = 0;
    while (fgets(line, sizeof line, f)) {
        if (!in_entry) {
            in_entry = strstr(line, head) != NULL;
            continue;
        }
        char *s = line + strspn(line, " \t");
        if (*s == ')')
            break;
        cr_assert_eq(strncmp(s, ".param", 6), 0, "%s: unexpected line in the entry: %s", path, s);
        /* ".param [.align N] .type name[n]," */
        char tok[5][64];
        int n = sscanf(s, "%63s %63s %63s %63s %63s", tok[0], tok[1], tok[2], tok[3], tok[4]);
        int t = strcmp(tok[1], ".align") == 0 ? 3 : 1;
        cr_assert_geq(n, t + 2, "%s: cannot parse %s", path, s);
        cr_assert_lt(k->count, TSUPPORT_MAX_PARAMS);
        size_t len = strcspn(tok[t + 1], "[,");
        cr_assert_lt(len, sizeof k->name[0]);
        memcpy(k->name[k->count], tok[t + 1], len);
        k->name[k->count][len] = '\0';
        k->bytes[k->count] = param_bytes(tok[t], tok[t + 1]);
        k->count++;
    }
    fclose(f);
    cr_assert(in_entry, "%s declares no .entry %s", path, entry);
}

int tsupport_kparams_index(const tsupport_kparams *k, const char *name)
{
    for (int i = 0; i < k->count; i++)
        if (!strcmp(k->name[i], name))
            return i;
    cr_assert_fail("the kernel declares no parameter %s", name);
    return -1;
}
