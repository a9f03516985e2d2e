/* The .npy reader and writer of the tools (tools/cli_npy.h): round trips of every
 * accepted dtype, the header forms np.save writes (versions 1.0 and 2.0), every
 * rejection rule, fp4lr_npy_expect, and files written by numpy itself (when
 * python3 with numpy and ml_dtypes is installed). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The Makefile links tools/cli_*.c into the tools only, not into the test binary:
 * the unit under test is compiled in here. */
#include "../tools/cli_npy.c"

/* ---- helpers ------------------------------------------------------------------ */

/* A fresh directory for one test's files; tmp_remove deletes it and its files. */
static void tmp_make(char dir[64])
{
    strcpy(dir, "/tmp/fp4lr-npy-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* tmp_make, and `path` set to DIR/name. */
static void tmp_make_file(char dir[64], char path[128], const char *name)
{
    tmp_make(dir);
    snprintf(path, 128, "%s/%s", dir, name);
}

static void tmp_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
    closedir(d);
    rmdir(dir);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot create %s", path);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* The whole file (at most n bytes) into b; returns its size. */
static size_t read_bytes(const char *path, unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t got = fread(b, 1, n, f);
    fclose(f);
    return got;
}

/* A version 1.0 or 2.0 file: preamble, `header` as given (no padding added) and
 * `ndata` bytes of data (0x00, 0x01, ...).  Returns the file size. */
static size_t write_npy_raw(const char *path, int version, const char *header, size_t ndata)
{
    size_t hl = strlen(header), lb = version == 1 ? 2 : 4, n = 8 + lb + hl + ndata;
    unsigned char *b = malloc(n);
    cr_assert_not_null(b);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)version, b[7] = 0;
    for (size_t i = 0; i < lb; i++)
        b[8 + i] = (unsigned char)(hl >> (8 * i));
    memcpy(b + 8 + lb, header, hl);
    for (size_t i = 0; i < ndata; i++)
        b[8 + lb + hl + i] = (unsigned char)i;
    write_bytes(path, b, n);
    free(b);
    return n;
}

/* Reads `path` expecting a rejection with `rule`; the message names the file. */
static void expect_reject(const char *path, fp4lr_code code, const char *rule)
{
    fp4lr_npy a;
    fp4lr_status st = fp4lr_npy_read(path, &a);
    cr_expect_eq(st.code, code, "%s: code %s, want %s (%s)", path, fp4lr_code_name(st.code), fp4lr_code_name(code),
                 st.msg);
    cr_expect_str_eq(st.rule, rule, "%s: %s", path, st.msg);
    cr_expect_not_null(strstr(st.msg, path), "message does not name the file: %s", st.msg);
    cr_expect_null(a.data);
}

/* A v1 file whose header is `dict` padded like np.save, with `ndata` data bytes. */
static void expect_header_reject(const char *dir, const char *dict, size_t ndata, const char *rule)
{
    char path[128], h[256];
    snprintf(path, sizeof path, "%s/h.npy", dir);
    snprintf(h, sizeof h, "%-117s\n", dict);
    write_npy_raw(path, 1, h, ndata);
    expect_reject(path, FP4LR_E_INVALID, rule);
}

/* ---- round trips ------------------------------------------------------------- */

Test(npy, roundtrip_every_dtype)
{
    static const char *descrs[] = {"|u1", "<u1", "|i1", "<i1", "<u2", "<i2", "|V2", "<V2", "<f4", "<f8", "<i8"};
    static const fp4lr_npy_dtype want[] = {FP4LR_NPY_U1, FP4LR_NPY_U1, FP4LR_NPY_I1, FP4LR_NPY_I1,
                                           FP4LR_NPY_U2, FP4LR_NPY_I2, FP4LR_NPY_V2, FP4LR_NPY_V2,
                                           FP4LR_NPY_F4, FP4LR_NPY_F8, FP4LR_NPY_I8};
    static const int size[] = {1, 1, 1, 1, 2, 2, 2, 2, 4, 8, 8};
    char dir[64], path[128];
    tmp_make_file(dir, path, "x.npy");
    unsigned char data[2 * 3 * 8];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 37 + 11);
    const int64_t shape[2] = {2, 3};
    for (size_t t = 0; t < sizeof descrs / sizeof descrs[0]; t++) {
        fp4lr_status st = fp4lr_npy_write(path, descrs[t], 2, shape, data);
        cr_assert_eq(st.code, FP4LR_OK, "%s: %s", descrs[t], st.msg);
        fp4lr_npy a;
        st = fp4lr_npy_read(path, &a);
        cr_assert_eq(st.code, FP4LR_OK, "%s: %s", descrs[t], st.msg);
        cr_expect_eq(a.dtype, want[t], "%s", descrs[t]);
        cr_expect_eq(a.itemsize, size[t], "%s", descrs[t]);
        cr_expect_eq(a.version, 1);
        cr_expect_eq(a.ndim, 2);
        cr_expect_eq(a.shape[0], 2);
        cr_expect_eq(a.shape[1], 3);
        cr_expect_eq(a.count, 6);
        cr_expect_eq(memcmp(a.data, data, (size_t)(6 * size[t])), 0, "%s: data differs", descrs[t]);
        cr_expect_eq((uintptr_t)a.data % 64, 0);
        fp4lr_npy_free(&a);
        cr_expect_null(a.data);
    }
    tmp_remove(dir);
}

Test(npy, roundtrip_scalar_empty_and_many_dims)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "x.npy");
    fp4lr_npy a;

    float alpha = 0.375f;
    cr_assert_eq(fp4lr_npy_write(path, "<f4", 0, NULL, &alpha).code, FP4LR_OK);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.ndim, 0);
    cr_expect_eq(a.count, 1);
    cr_expect_eq(*(float *)a.data, 0.375f);
    fp4lr_npy_free(&a);

    const int64_t empty[1] = {0};
    cr_assert_eq(fp4lr_npy_write(path, "<i8", 1, empty, NULL).code, FP4LR_OK);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.ndim, 1);
    cr_expect_eq(a.shape[0], 0);
    cr_expect_eq(a.count, 0);
    cr_expect_null(a.data);
    fp4lr_npy_free(&a);

    const int64_t eight[FP4LR_NPY_MAX_DIMS] = {1, 2, 1, 3, 1, 1, 2, 1};
    uint16_t v[12];
    for (int i = 0; i < 12; i++)
        v[i] = (uint16_t)(0x3F80 + i);
    cr_assert_eq(fp4lr_npy_write(path, "<u2", FP4LR_NPY_MAX_DIMS, eight, v).code, FP4LR_OK);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.ndim, FP4LR_NPY_MAX_DIMS);
    cr_expect_eq(a.count, 12);
    cr_expect_eq(a.shape[6], 2);
    cr_expect_eq(((uint16_t *)a.data)[11], 0x3F8B);
    fp4lr_npy_free(&a);
    tmp_remove(dir);
}

/* The writer's bytes are np.save's: np.save(f, np.zeros((2, 3), np.uint16)) starts
 * with "\x93NUMPY\x01\x00" and header length 118 (0x76), so that 10 + 118 = 128. */
Test(npy, writer_header_is_numpys)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "x.npy");
    const uint16_t zeros[6] = {0};
    const int64_t shape[2] = {2, 3};
    cr_assert_eq(fp4lr_npy_write(path, "<u2", 2, shape, zeros).code, FP4LR_OK);
    unsigned char b[256];
    size_t n = read_bytes(path, b, sizeof b);
    cr_expect_eq(n, 128 + 12);
    cr_expect_eq(memcmp(b, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
    const char *dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }";
    cr_expect_eq(memcmp(b + 10, dict, strlen(dict)), 0);
    for (size_t i = 10 + strlen(dict); i < 127; i++)
        cr_expect_eq(b[i], ' ', "byte %zu", i);
    cr_expect_eq(b[127], '\n');
    tmp_remove(dir);
}

Test(npy, shape_text)
{
    char b[64];
    const int64_t s[3] = {2, 3, 40};
    fp4lr_npy_shape_text(0, s, b, sizeof b);
    cr_expect_str_eq(b, "()");
    fp4lr_npy_shape_text(1, s, b, sizeof b);
    cr_expect_str_eq(b, "(2,)");
    fp4lr_npy_shape_text(3, s, b, sizeof b);
    cr_expect_str_eq(b, "(2, 3, 40)");
    fp4lr_npy_shape_text(3, s, b, 5); /* truncated, still terminated */
    cr_expect_str_eq(b, "(2, ");
}

/* ---- header forms --------------------------------------------------------------- */

Test(npy, reads_version_2_header)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "v2.npy");
    /* 12 + 52 = 64: a version 2.0 file as np.lib.format.write_array(version=(2, 0)) pads it. */
    write_npy_raw(path, 2, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }                              \n", 4);
    fp4lr_npy a;
    fp4lr_status st = fp4lr_npy_read(path, &a);
    cr_assert_eq(st.code, FP4LR_OK, "%s", st.msg);
    cr_expect_eq(a.version, 2);
    cr_expect_eq(a.dtype, FP4LR_NPY_I2);
    cr_expect_eq(a.count, 2);
    cr_expect_eq(((int16_t *)a.data)[0], 0x0100); /* data bytes 00 01 02 03, little-endian */
    cr_expect_eq(((int16_t *)a.data)[1], 0x0302);
    fp4lr_npy_free(&a);
    tmp_remove(dir);
}

/* Forms a Python dict literal may take: any key order, either quote, no trailing
 * comma, a trailing comma in the tuple, Python 2 'L' extents, no padding. */
Test(npy, header_variants_accepted)
{
    static const char *headers[] = {
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}\n",
        "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (2,3,)}",
        "{'descr':'|u1','fortran_order':False,'shape':(2L, 3L),}   \n",
        " { 'descr' : '<u1' , 'fortran_order' : False , 'shape' : ( 2 , 3 ) } \n",
    };
    char dir[64], path[128];
    tmp_make_file(dir, path, "h.npy");
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        write_npy_raw(path, 1, headers[i], 6);
        fp4lr_npy a;
        fp4lr_status st = fp4lr_npy_read(path, &a);
        cr_expect_eq(st.code, FP4LR_OK, "header %zu: %s", i, st.msg);
        cr_expect_eq(a.ndim, 2, "header %zu", i);
        cr_expect_eq(a.shape[0] * 10 + a.shape[1], 23, "header %zu", i);
        cr_expect_eq(a.dtype, FP4LR_NPY_U1, "header %zu", i);
        if (a.data)
            cr_expect_eq(((uint8_t *)a.data)[5], 5);
        fp4lr_npy_free(&a);
    }
    tmp_remove(dir);
}

/* ---- rejections ------------------------------------------------------------------- */

Test(npy, rejects_open_and_magic)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "missing.npy");
    expect_reject(path, FP4LR_E_IO, "NPY_OPEN");
    expect_reject(dir, FP4LR_E_IO, "NPY_OPEN"); /* a directory */
    snprintf(path, sizeof path, "%s/m.npy", dir);
    write_bytes(path, "\x93NUMPX\x01\x00\x10\x00", 10);
    expect_reject(path, FP4LR_E_INVALID, "NPY_MAGIC");
    write_bytes(path, "PK\x03\x04", 4); /* an .npz (zip) is not an .npy */
    expect_reject(path, FP4LR_E_INVALID, "NPY_MAGIC");
    tmp_remove(dir);
}

Test(npy, rejects_truncated_header)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "t.npy");
    write_bytes(path, "", 0);
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED");
    write_bytes(path, "\x93NUM", 4);
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED");
    write_bytes(path, "\x93NUMPY\x01\x00\x76", 9); /* half of the length field */
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED");
    write_bytes(path, "\x93NUMPY\x02\x00\x76\x00\x00", 11);
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED");
    /* The length field claims 118 header bytes; 40 are there. */
    write_bytes(path, "\x93NUMPY\x01\x00\x76\x00{'descr': '<u2', 'fortran_order': False,", 50);
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED");
    /* Version 2 with a 4 GiB header length. */
    write_bytes(path, "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13);
    expect_reject(path, FP4LR_E_INVALID, "NPY_HEADER_SIZE");
    tmp_remove(dir);
}

Test(npy, rejects_version)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "v.npy");
    const char *h = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }\n";
    write_npy_raw(path, 3, h, 1); /* 3.0 (UTF-8 header) */
    expect_reject(path, FP4LR_E_INVALID, "NPY_VERSION");
    size_t n = write_npy_raw(path, 1, h, 1);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, 7, SEEK_SET);
    fputc(1, f); /* 1.1 */
    fclose(f);
    cr_expect_gt(n, 8);
    expect_reject(path, FP4LR_E_INVALID, "NPY_VERSION");
    tmp_remove(dir);
}

Test(npy, rejects_data_size)
{
    char dir[64];
    tmp_make(dir);
    /* (2, 3) of '<f4' needs 24 bytes. */
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    expect_header_reject(dir, dict, 23, "NPY_DATA_TRUNCATED");
    expect_header_reject(dir, dict, 0, "NPY_DATA_TRUNCATED");
    expect_header_reject(dir, dict, 25, "NPY_DATA_SIZE");
    /* The element count of the shape must not overflow. */
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0,
                         "NPY_SHAPE");
    expect_header_reject(dir, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", 0,
                         "NPY_SHAPE");
    tmp_remove(dir);
}

Test(npy, rejects_fortran_order_and_big_endian)
{
    char dir[64];
    tmp_make(dir);
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
                         "NPY_FORTRAN_ORDER");
    expect_header_reject(dir, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24, "NPY_BIG_ENDIAN");
    expect_header_reject(dir, "{'descr': '>u2', 'fortran_order': False, 'shape': (6,), }", 12, "NPY_BIG_ENDIAN");
    expect_header_reject(dir, "{'descr': '!i2', 'fortran_order': False, 'shape': (6,), }", 12, "NPY_BIG_ENDIAN");
    tmp_remove(dir);
}

Test(npy, rejects_unsupported_descr)
{
    static const char *bad[] = {"<f2", "<c8", "=f4", "<u4", "|b1", "<U3", "|S4", "<V4", "f4", "<f4 "};
    char dir[64], dict[128];
    tmp_make(dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }", bad[i]);
        expect_header_reject(dir, dict, 4, "NPY_DTYPE");
    }
    expect_header_reject(dir, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, "NPY_DTYPE");
    tmp_remove(dir);
}

Test(npy, rejects_header_syntax_and_keys)
{
    char dir[64];
    tmp_make(dir);
    const char *syntax_bad[] = {
        "'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",   /* no '{' */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",   /* (2) is an int */
        "{'descr': '<f4', 'fortran_order': False, 'shape': 2, }",     /* not a tuple */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } x", /* text after '}' */
        "{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }",  /* not Python's False */
        "{'descr': '<f4}",                                             /* unterminated string */
        "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,), }", /* an escape */
        "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }",   /* missing ',' */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",     /* no '}' */
    };
    for (size_t i = 0; i < sizeof syntax_bad / sizeof syntax_bad[0]; i++)
        expect_header_reject(dir, syntax_bad[i], 8, "NPY_HEADER_SYNTAX");
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False}", 4, "NPY_HEADER_KEYS");
    expect_header_reject(dir, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
                         "NPY_HEADER_KEYS");
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 0}", 4,
                         "NPY_HEADER_KEYS");
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, "NPY_SHAPE");
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4,
                         "NPY_SHAPE");
    expect_header_reject(dir, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 4,
                         "NPY_SHAPE");
    tmp_remove(dir);
}

Test(npy, writer_rejections)
{
    char dir[64], path[128];
    tmp_make_file(dir, path, "w.npy");
    const int64_t shape[2] = {2, 3}, neg[1] = {-1};
    const uint8_t data[6] = {0};
    fp4lr_status st = fp4lr_npy_write(path, "<f2", 2, shape, data);
    cr_expect_str_eq(st.rule, "NPY_DTYPE");
    st = fp4lr_npy_write(path, ">f4", 2, shape, data);
    cr_expect_str_eq(st.rule, "NPY_DTYPE");
    st = fp4lr_npy_write(path, "|u1", FP4LR_NPY_MAX_DIMS + 1, shape, data);
    cr_expect_str_eq(st.rule, "NPY_SHAPE");
    st = fp4lr_npy_write(path, "|u1", 1, neg, data);
    cr_expect_str_eq(st.rule, "NPY_SHAPE");
    st = fp4lr_npy_write(path, "|u1", 2, shape, NULL);
    cr_expect_str_eq(st.rule, "NPY_SHAPE");
    cr_expect_neq(access(path, F_OK), 0, "nothing is written on a rejection");
    snprintf(path, sizeof path, "%s/no/such/dir/w.npy", dir);
    st = fp4lr_npy_write(path, "|u1", 2, shape, data);
    cr_expect_eq(st.code, FP4LR_E_IO);
    cr_expect_str_eq(st.rule, "NPY_WRITE");
    cr_expect_not_null(strstr(st.msg, path));
    tmp_remove(dir);
}

/* Every proper prefix of a valid file is rejected as truncated (never read past
 * the end, never accepted). */
Test(npy, every_truncation_rejected)
{
    char dir[64], path[128], cut[128];
    tmp_make_file(dir, path, "x.npy");
    snprintf(cut, sizeof cut, "%s/cut.npy", dir);
    const int64_t shape[2] = {3, 5};
    float v[15];
    for (int i = 0; i < 15; i++)
        v[i] = (float)i;
    cr_assert_eq(fp4lr_npy_write(path, "<f4", 2, shape, v).code, FP4LR_OK);
    unsigned char b[256];
    size_t n = read_bytes(path, b, sizeof b);
    cr_assert_eq(n, 128 + 60);
    for (size_t len = 0; len < n; len++) {
        write_bytes(cut, b, len);
        fp4lr_npy a;
        fp4lr_status st = fp4lr_npy_read(cut, &a);
        const char *want = len < 128 ? "NPY_HEADER_TRUNCATED" : "NPY_DATA_TRUNCATED";
        cr_expect_str_eq(st.rule, want, "prefix of %zu bytes: %s", len, st.msg);
    }
    tmp_remove(dir);
}

/* Every header byte replaced by each of a few characters: the reader answers
 * with success or a named rule, never a crash (run under a sanitizer to see
 * reads out of bounds). */
Test(npy, mutated_headers_answer_with_a_rule)
{
    static const char subst[] = {'\0', ' ', '\'', '(', ')', ',', '}', '{', ':', '9', '-', 'L', '>', '\n', '\xff'};
    char dir[64], path[128];
    tmp_make_file(dir, path, "m.npy");
    const char *h = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }          \n";
    const size_t hl = strlen(h);
    char mutated[128];
    int accepted = 0;
    for (size_t i = 0; i < hl; i++)
        for (size_t s = 0; s < sizeof subst; s++) {
            memcpy(mutated, h, hl);
            mutated[i] = subst[s];
            /* write_npy_raw takes a C string: write the header length by hand. */
            unsigned char b[10 + 128 + 12];
            memcpy(b, "\x93NUMPY\x01\x00", 8);
            b[8] = (unsigned char)hl, b[9] = 0;
            memcpy(b + 10, mutated, hl);
            memset(b + 10 + hl, 0x41, 12);
            write_bytes(path, b, 10 + hl + 12);
            fp4lr_npy a;
            fp4lr_status st = fp4lr_npy_read(path, &a);
            if (st.code == FP4LR_OK) {
                accepted++;
                cr_expect_eq(a.count * a.itemsize, 12);
            } else {
                cr_expect_neq(st.rule[0], '\0', "byte %zu -> 0x%02x: no rule (%s)", i, (unsigned char)subst[s],
                              st.msg);
            }
            fp4lr_npy_free(&a);
        }
    cr_expect_gt(accepted, 0); /* e.g. a space for a space */
    tmp_remove(dir);
}

/* ---- expectations ------------------------------------------------------------------ */

Test(npy, expect_dtype_and_shape)
{
    fp4lr_npy a = {.dtype = FP4LR_NPY_V2, .itemsize = 2, .ndim = 2, .shape = {130, 16}, .count = 130 * 16};
    const int64_t ok[2] = {130, FP4LR_NPY_ANY}, other[2] = {130, 32};
    cr_expect_eq(fp4lr_npy_expect(&a, "L.npy", FP4LR_NPY_BF16_BITS, "bf16", 2, ok, "(M, r)").code, FP4LR_OK);
    cr_expect_eq(fp4lr_npy_expect(&a, "L.npy", FP4LR_NPY_BF16_BITS, "bf16", -1, NULL, NULL).code, FP4LR_OK);

    fp4lr_status st = fp4lr_npy_expect(&a, "L.npy", FP4LR_NPY_BYTES, "uint8", 2, ok, "(M, r)");
    cr_expect_str_eq(st.rule, "NPY_EXPECT_DTYPE");
    cr_expect_str_eq(st.msg, "L.npy: expected uint8, found dtype '|V2'");

    st = fp4lr_npy_expect(&a, "L.npy", FP4LR_NPY_BF16_BITS, "bf16", 2, other, "(M, r) = (130, 32)");
    cr_expect_str_eq(st.rule, "NPY_EXPECT_SHAPE");
    cr_expect_str_eq(st.msg, "L.npy: expected shape (M, r) = (130, 32), found (130, 16)");

    st = fp4lr_npy_expect(&a, "L.npy", FP4LR_NPY_BF16_BITS, "bf16", 1, ok, "(M,)");
    cr_expect_str_eq(st.rule, "NPY_EXPECT_SHAPE");
}

/* ---- files written by numpy ------------------------------------------------------------ */

Test(npy, reads_files_written_by_numpy)
{
    if (system("python3 -c 'import numpy, ml_dtypes' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 with numpy and ml_dtypes is not installed");
    char dir[64], cmd[2048];
    tmp_make(dir);
    snprintf(cmd, sizeof cmd,
             "cd %s && python3 -c \""
             "import numpy as np, ml_dtypes\n"
             "np.save('u1.npy', np.array([[0, 1, 2], [253, 254, 255]], np.uint8))\n"
             "np.save('i2.npy', np.array([-2, 300], np.int16))\n"
             "np.save('bf16.npy', np.array([1.0, -2.5, 3.0], ml_dtypes.bfloat16))\n"
             "np.save('f4.npy', np.float32(0.75))\n"
             "with open('v2.npy', 'wb') as f: np.lib.format.write_array(f, np.arange(4, dtype='<f4'), version=(2, 0))\n"
             "np.save('fortran.npy', np.asfortranarray(np.zeros((2, 3), np.float32)))\n"
             "np.save('big.npy', np.zeros(3, '>f4'))\n"
             "np.save('f2.npy', np.zeros(3, np.float16))\n"
             "\"",
             dir);
    cr_assert_eq(system(cmd), 0, "python3 could not write the files");
    char path[128];
    fp4lr_npy a;

    snprintf(path, sizeof path, "%s/u1.npy", dir);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.dtype, FP4LR_NPY_U1);
    cr_expect_eq(a.shape[0] * 10 + a.shape[1], 23);
    cr_expect_eq(((uint8_t *)a.data)[4], 254);
    fp4lr_npy_free(&a);

    snprintf(path, sizeof path, "%s/i2.npy", dir);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.dtype, FP4LR_NPY_I2);
    cr_expect_eq(((int16_t *)a.data)[0], -2);
    cr_expect_eq(((int16_t *)a.data)[1], 300);
    fp4lr_npy_free(&a);

    /* ml_dtypes.bfloat16 is saved as '<V2'; 1.0, -2.5, 3.0 are 0x3F80, 0xC020, 0x4040. */
    snprintf(path, sizeof path, "%s/bf16.npy", dir);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.dtype, FP4LR_NPY_V2);
    cr_expect_eq(a.count, 3);
    cr_expect_eq(((uint16_t *)a.data)[0], 0x3F80);
    cr_expect_eq(((uint16_t *)a.data)[1], 0xC020);
    cr_expect_eq(((uint16_t *)a.data)[2], 0x4040);
    fp4lr_npy_free(&a);

    snprintf(path, sizeof path, "%s/f4.npy", dir);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.ndim, 0);
    cr_expect_eq(*(float *)a.data, 0.75f);
    fp4lr_npy_free(&a);

    snprintf(path, sizeof path, "%s/v2.npy", dir);
    cr_assert_eq(fp4lr_npy_read(path, &a).code, FP4LR_OK);
    cr_expect_eq(a.version, 2);
    cr_expect_eq(((float *)a.data)[3], 3.0f);
    fp4lr_npy_free(&a);

    snprintf(path, sizeof path, "%s/fortran.npy", dir);
    expect_reject(path, FP4LR_E_INVALID, "NPY_FORTRAN_ORDER");
    snprintf(path, sizeof path, "%s/big.npy", dir);
    expect_reject(path, FP4LR_E_INVALID, "NPY_BIG_ENDIAN");
    snprintf(path, sizeof path, "%s/f2.npy", dir);
    expect_reject(path, FP4LR_E_INVALID, "NPY_DTYPE");
    tmp_remove(dir);
}

/* numpy reads what the writer writes (np.load, values and dtypes). */
Test(npy, numpy_reads_written_files)
{
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 with numpy is not installed");
    char dir[64], path[128], cmd[1024];
    tmp_make(dir);
    const int64_t ys[2] = {2, 2}, rs[1] = {3};
    const uint16_t y[4] = {0x3F80, 0xC020, 0x0000, 0x7F80};
    const int64_t rows[3] = {0, 5, 129};
    snprintf(path, sizeof path, "%s/Y.npy", dir);
    cr_assert_eq(fp4lr_npy_write(path, "<u2", 2, ys, y).code, FP4LR_OK);
    snprintf(path, sizeof path, "%s/rows.npy", dir);
    cr_assert_eq(fp4lr_npy_write(path, "<i8", 1, rs, rows).code, FP4LR_OK);
    snprintf(cmd, sizeof cmd,
             "cd %s && python3 -c \""
             "import numpy as np\n"
             "y = np.load('Y.npy'); r = np.load('rows.npy')\n"
             "assert y.dtype == np.uint16 and y.shape == (2, 2) and y.tolist() == [[0x3F80, 0xC020], [0, 0x7F80]], y\n"
             "assert r.dtype == np.int64 and r.tolist() == [0, 5, 129], r\n"
             "\"",
             dir);
    cr_expect_eq(system(cmd), 0, "np.load disagrees with the written files");
    tmp_remove(dir);
}
