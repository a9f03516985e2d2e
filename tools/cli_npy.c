/* The .npy reader and writer (cli_npy.h): preamble, header dict parser, data. */
#include "cli_npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- dtypes ------------------------------------------------------------------ */

static const struct {
    const char *descr; /* canonical, written */
    int itemsize;
} npy_dtypes[FP4LR_NPY_NUM_DTYPES] = {
    [FP4LR_NPY_U1] = {"|u1", 1}, [FP4LR_NPY_I1] = {"|i1", 1}, [FP4LR_NPY_U2] = {"<u2", 2},
    [FP4LR_NPY_I2] = {"<i2", 2}, [FP4LR_NPY_V2] = {"|V2", 2}, [FP4LR_NPY_F4] = {"<f4", 4},
    [FP4LR_NPY_F8] = {"<f8", 8}, [FP4LR_NPY_I8] = {"<i8", 8},
};

const char *fp4lr_npy_descr(fp4lr_npy_dtype d) { return npy_dtypes[d].descr; }
int fp4lr_npy_itemsize(fp4lr_npy_dtype d) { return npy_dtypes[d].itemsize; }

int fp4lr_npy_parse_descr(const char *descr, fp4lr_npy_dtype *d)
{
    /* Byte-sized and opaque types may carry '|' (no byte order) or '<'; the rest
     * must say little-endian.  '<V2' is what np.save writes for ml_dtypes.bfloat16. */
    static const struct {
        const char *descr;
        fp4lr_npy_dtype d;
    } accepted[] = {
        {"|u1", FP4LR_NPY_U1}, {"<u1", FP4LR_NPY_U1}, {"|i1", FP4LR_NPY_I1}, {"<i1", FP4LR_NPY_I1},
        {"<u2", FP4LR_NPY_U2}, {"<i2", FP4LR_NPY_I2}, {"|V2", FP4LR_NPY_V2}, {"<V2", FP4LR_NPY_V2},
        {"<f4", FP4LR_NPY_F4}, {"<f8", FP4LR_NPY_F8}, {"<i8", FP4LR_NPY_I8},
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        if (!strcmp(descr, accepted[i].descr)) {
            *d = accepted[i].d;
            return 0;
        }
    return -1;
}

void fp4lr_npy_shape_text(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t at = 0;
    int w = snprintf(buf, n, "(");
    at = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < ndim && at < n; i++) {
        w = snprintf(buf + at, n - at, i ? ", %lld" : "%lld", (long long)shape[i]);
        at += w > 0 ? (size_t)w : 0;
    }
    if (at < n)
        snprintf(buf + at, n - at, ndim == 1 ? ",)" : ")");
}

/* Product of the extents with overflow and sign checks: 0, or -1. */
static int shape_count(int ndim, const int64_t *shape, int64_t *count)
{
    int64_t c = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || __builtin_mul_overflow(c, shape[i], &c))
            return -1;
    *count = c;
    return 0;
}

/* ---- the header dict ------------------------------------------------------------ */

typedef struct cursor {
    const char *s;
    size_t n, i;
    const char *path;
} cursor;

/* Up to 24 characters at the cursor, non-printables as '?', for messages. */
static const char *excerpt(const cursor *c, char *buf, size_t n)
{
    size_t k = 0;
    for (size_t j = c->i; j < c->n && k + 1 < n && k < 24; j++, k++)
        buf[k] = c->s[j] >= 0x20 && c->s[j] < 0x7f ? c->s[j] : '?';
    buf[k] = '\0';
    return k ? buf : "<end of header>";
}

static fp4lr_status syntax(const cursor *c, const char *expected)
{
    char ex[32];
    return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_SYNTAX",
                      "%s: header is not the dict literal np.save writes: expected %s at header byte %zu, found '%s'",
                      c->path, expected, c->i, excerpt(c, ex, sizeof ex));
}

static void skip_ws(cursor *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

/* Consumes `ch` after optional whitespace: 1, or 0 (cursor left at the mismatch). */
static int take(cursor *c, char ch)
{
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == ch) {
        c->i++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes ('...' or "..."), copied into buf. */
static fp4lr_status parse_string(cursor *c, char *buf, size_t n, const char *what)
{
    skip_ws(c);
    if (c->i >= c->n || (c->s[c->i] != '\'' && c->s[c->i] != '"'))
        return syntax(c, what);
    char q = c->s[c->i];
    size_t start = ++c->i;
    while (c->i < c->n && c->s[c->i] != q && c->s[c->i] != '\\' && c->s[c->i] != '\n')
        c->i++;
    if (c->i >= c->n || c->s[c->i] != q)
        return syntax(c, "a closing quote (escapes are not accepted)");
    size_t len = c->i - start;
    c->i++;
    if (len + 1 > n)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_SYNTAX", "%s: string of %zu characters in the header (%s)",
                          c->path, len, what);
    memcpy(buf, c->s + start, len);
    buf[len] = '\0';
    return fp4lr_ok();
}

/* The descr value: a string, or the list of a structured dtype (rejected). */
static fp4lr_status parse_descr_value(cursor *c, fp4lr_npy *a)
{
    skip_ws(c);
    if (c->i < c->n && c->s[c->i] == '[')
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_DTYPE",
                          "%s: structured dtype (a list descr) is not supported; expected one of '|u1' '<u1' "
                          "'|i1' '<u2' '<i2' '|V2' '<V2' '<f4' '<f8' '<i8'",
                          c->path);
    char descr[64];
    FP4LR_TRY(parse_string(c, descr, sizeof descr, "the descr string"));
    if (descr[0] == '>' || descr[0] == '!')
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_BIG_ENDIAN",
                          "%s: big-endian data ('%s') is not supported; save it little-endian "
                          "(x.astype(x.dtype.newbyteorder('<')))",
                          c->path, descr);
    fp4lr_npy_dtype d;
    if (fp4lr_npy_parse_descr(descr, &d))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_DTYPE",
                          "%s: dtype '%s' is not supported; expected one of '|u1' '<u1' '|i1' '<u2' '<i2' "
                          "'|V2' '<V2' (bfloat16) '<f4' '<f8' '<i8'",
                          c->path, descr);
    a->dtype = d;
    a->itemsize = npy_dtypes[d].itemsize;
    return fp4lr_ok();
}

static fp4lr_status parse_fortran_value(cursor *c)
{
    skip_ws(c);
    if (c->n - c->i >= 5 && !memcmp(c->s + c->i, "False", 5)) {
        c->i += 5;
        return fp4lr_ok();
    }
    if (c->n - c->i >= 4 && !memcmp(c->s + c->i, "True", 4))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_FORTRAN_ORDER",
                          "%s: 'fortran_order': True (column-major) is not supported; save a C-order array "
                          "(np.ascontiguousarray)",
                          c->path);
    return syntax(c, "True or False");
}

/* A non-negative extent; a trailing 'L' (Python 2 long, old numpy files) is allowed. */
static fp4lr_status parse_extent(cursor *c, int64_t *v)
{
    skip_ws(c);
    size_t start = c->i;
    int neg = c->i < c->n && c->s[c->i] == '-';
    if (neg)
        c->i++;
    if (c->i >= c->n || c->s[c->i] < '0' || c->s[c->i] > '9')
        return c->i = start, syntax(c, "an integer extent");
    int64_t x = 0;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, c->s[c->i] - '0', &x))
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: shape extent at header byte %zu overflows int64",
                              c->path, start);
        c->i++;
    }
    if (c->i < c->n && c->s[c->i] == 'L')
        c->i++;
    if (neg)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: negative shape extent -%lld", c->path, (long long)x);
    *v = x;
    return fp4lr_ok();
}

/* A tuple of extents: "()", "(3,)", "(3, 4)" or "(3, 4,)"; "(3)" is an int in
 * Python, not a tuple, and is rejected. */
static fp4lr_status parse_shape_value(cursor *c, fp4lr_npy *a)
{
    if (!take(c, '('))
        return syntax(c, "'(' opening the shape tuple");
    a->ndim = 0;
    while (!take(c, ')')) {
        if (a->ndim == FP4LR_NPY_MAX_DIMS)
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: more than %d dimensions", c->path,
                              FP4LR_NPY_MAX_DIMS);
        FP4LR_TRY(parse_extent(c, &a->shape[a->ndim]));
        a->ndim++;
        if (take(c, ','))
            continue;
        if (a->ndim == 1 || !take(c, ')'))
            return syntax(c, a->ndim == 1 ? "',' after the single extent (a 1-tuple)" : "',' or ')' in the shape");
        break;
    }
    if (shape_count(a->ndim, a->shape, &a->count))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: the element count of the shape overflows int64",
                          c->path);
    return fp4lr_ok();
}

/* The whole header: { key: value, ... } then only whitespace.  Each of the three
 * keys exactly once, no other key (numpy's own reader is as strict). */
static fp4lr_status parse_header(cursor *c, fp4lr_npy *a)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0};
    if (!take(c, '{'))
        return syntax(c, "'{'");
    while (!take(c, '}')) {
        char key[64];
        FP4LR_TRY(parse_string(c, key, sizeof key, "a quoted key or '}'"));
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]))
            k++;
        if (k == 3)
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_KEYS",
                              "%s: unknown header key '%s' (expected 'descr', 'fortran_order', 'shape')", c->path,
                              key);
        if (seen[k]++)
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_KEYS", "%s: header key '%s' appears twice", c->path, key);
        if (!take(c, ':'))
            return syntax(c, "':' after the key");
        if (k == 0)
            FP4LR_TRY(parse_descr_value(c, a));
        else if (k == 1)
            FP4LR_TRY(parse_fortran_value(c));
        else
            FP4LR_TRY(parse_shape_value(c, a));
        if (take(c, ','))
            continue;
        if (!take(c, '}'))
            return syntax(c, "',' or '}' after a value");
        break;
    }
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_KEYS", "%s: header key '%s' is missing", c->path, keys[k]);
    skip_ws(c);
    if (c->i != c->n)
        return syntax(c, "only spaces and a newline after '}'");
    return fp4lr_ok();
}

/* ---- reading ---------------------------------------------------------------------- */

static fp4lr_status read_exact(FILE *f, void *buf, size_t n, const char *path, const char *what)
{
    if (n && fread(buf, 1, n, f) != n)
        return fp4lr_fail(FP4LR_E_IO, "NPY_READ", "%s: cannot read the %s (%zu bytes): %s", path, what, n,
                          ferror(f) ? strerror(errno) : "unexpected end of file");
    return fp4lr_ok();
}

static fp4lr_status truncated(const char *path, uint64_t size, const char *where)
{
    return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED", "%s: the file (%llu bytes) ends inside %s", path,
                      (unsigned long long)size, where);
}

/* Preamble and header: fills a's dtype and shape, returns the data offset. */
static fp4lr_status read_header(FILE *f, uint64_t size, const char *path, fp4lr_npy *a, uint64_t *data_at)
{
    unsigned char pre[12];
    size_t have = size < sizeof pre ? (size_t)size : sizeof pre;
    FP4LR_TRY(read_exact(f, pre, have, path, "preamble"));
    size_t cmp = have < 6 ? have : 6;
    if (memcmp(pre, npy_magic, cmp))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_MAGIC", "%s: not a .npy file (it does not start with \\x93NUMPY)",
                          path);
    if (have < 8)
        return truncated(path, size, "the magic string and version");
    if ((pre[6] != 1 && pre[6] != 2) || pre[7] != 0)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_VERSION", "%s: .npy format version %u.%u (1.0 and 2.0 are read)",
                          path, pre[6], pre[7]);
    a->version = pre[6];
    size_t lenbytes = a->version == 1 ? 2 : 4;
    if (have < 8 + lenbytes)
        return truncated(path, size, "the header length field");
    uint64_t hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    if (lenbytes == 4)
        hlen |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    if (hlen > FP4LR_NPY_HEADER_MAX)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_SIZE", "%s: header length %llu above the %zu accepted", path,
                          (unsigned long long)hlen, FP4LR_NPY_HEADER_MAX);
    *data_at = 8 + lenbytes + hlen;
    if (*data_at > size)
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_HEADER_TRUNCATED",
                          "%s: the header claims %llu bytes but the file (%llu bytes) ends after %llu of them", path,
                          (unsigned long long)hlen, (unsigned long long)size,
                          (unsigned long long)(size - 8 - lenbytes));

    /* The first 12 bytes may already hold the start of a version 1 header. */
    char *h = malloc((size_t)hlen + 1);
    if (!h)
        return fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "%s: cannot allocate the header", path);
    size_t pre_h = have - (8 + lenbytes);
    pre_h = pre_h > hlen ? (size_t)hlen : pre_h;
    memcpy(h, pre + 8 + lenbytes, pre_h);
    fp4lr_status st = read_exact(f, h + pre_h, (size_t)hlen - pre_h, path, "header");
    if (st.code == FP4LR_OK) {
        cursor c = {h, (size_t)hlen, 0, path};
        st = parse_header(&c, a);
    }
    free(h);
    if (st.code == FP4LR_OK && have > *data_at && fseek(f, (long)*data_at, SEEK_SET))
        st = fp4lr_fail(FP4LR_E_IO, "NPY_READ", "%s: cannot seek to the data: %s", path, strerror(errno));
    return st;
}

fp4lr_status fp4lr_npy_read(const char *path, fp4lr_npy *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fp4lr_fail(FP4LR_E_IO, "NPY_OPEN", "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    fp4lr_status st = fp4lr_ok();
    if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode))
        st = fp4lr_fail(FP4LR_E_IO, "NPY_OPEN", "%s: not a regular file", path);
    const uint64_t size = st.code ? 0 : (uint64_t)sb.st_size;
    uint64_t data_at = 0;
    if (st.code == FP4LR_OK)
        st = read_header(f, size, path, out, &data_at);

    /* The data: exactly count * itemsize bytes after the header. */
    uint64_t need = 0;
    if (st.code == FP4LR_OK && __builtin_mul_overflow((uint64_t)out->count, (uint64_t)out->itemsize, &need))
        st = fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: the byte size of the shape overflows", path);
    if (st.code == FP4LR_OK && size - data_at < need) {
        char sh[160];
        fp4lr_npy_shape_text(out->ndim, out->shape, sh, sizeof sh);
        st = fp4lr_fail(FP4LR_E_INVALID, "NPY_DATA_TRUNCATED",
                        "%s: shape %s of %s needs %llu data bytes, the file holds %llu", path, sh,
                        npy_dtypes[out->dtype].descr, (unsigned long long)need, (unsigned long long)(size - data_at));
    } else if (st.code == FP4LR_OK && size - data_at > need) {
        char sh[160];
        fp4lr_npy_shape_text(out->ndim, out->shape, sh, sizeof sh);
        st = fp4lr_fail(FP4LR_E_INVALID, "NPY_DATA_SIZE",
                        "%s: shape %s of %s needs %llu data bytes, the file holds %llu (extra bytes after the data)",
                        path, sh, npy_dtypes[out->dtype].descr, (unsigned long long)need,
                        (unsigned long long)(size - data_at));
    }
    if (st.code == FP4LR_OK && need > 0) {
        out->data = aligned_alloc(64, ((size_t)need + 63) / 64 * 64);
        if (!out->data)
            st = fp4lr_fail(FP4LR_E_NOMEM, "HOST_ALLOC", "%s: cannot allocate %llu data bytes", path,
                            (unsigned long long)need);
        else
            st = read_exact(f, out->data, (size_t)need, path, "data");
    }
    fclose(f);
    if (st.code != FP4LR_OK)
        fp4lr_npy_free(out);
    return st;
}

void fp4lr_npy_free(fp4lr_npy *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- writing ------------------------------------------------------------------- */

fp4lr_status fp4lr_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data)
{
    fp4lr_npy_dtype d;
    if (!descr || fp4lr_npy_parse_descr(descr, &d))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_DTYPE", "%s: cannot write dtype '%s'", path, descr ? descr : "(null)");
    int64_t count;
    if (ndim < 0 || ndim > FP4LR_NPY_MAX_DIMS || (ndim > 0 && !shape) || shape_count(ndim, shape, &count))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: cannot write %d dimensions (0..%d, extents >= 0)", path,
                          ndim, FP4LR_NPY_MAX_DIMS);
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)count, (uint64_t)npy_dtypes[d].itemsize, &bytes) || bytes > SIZE_MAX ||
        (bytes && !data))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_SHAPE", "%s: no data for %lld elements", path, (long long)count);

    /* Header as np.save writes it, padded with spaces so that magic + version +
     * length + header is a multiple of 64 bytes, ending with '\n'. */
    char sh[FP4LR_NPY_MAX_DIMS * 22 + 4], h[512];
    fp4lr_npy_shape_text(ndim, shape, sh, sizeof sh);
    int len = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh);
    int total = (10 + len + 1 + 63) / 64 * 64;
    int hlen = total - 10;
    memset(h + len, ' ', (size_t)(hlen - len - 1));
    h[hlen - 1] = '\n';
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF),
                             (unsigned char)(hlen >> 8)};

    FILE *f = fopen(path, "wb");
    if (!f)
        return fp4lr_fail(FP4LR_E_IO, "NPY_WRITE", "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(h, 1, (size_t)hlen, f) == (size_t)hlen &&
             (bytes == 0 || fwrite(data, 1, (size_t)bytes, f) == (size_t)bytes);
    int err = ok ? 0 : errno;
    if (fclose(f) && ok)
        ok = 0, err = errno;
    if (!ok) {
        remove(path);
        return fp4lr_fail(FP4LR_E_IO, "NPY_WRITE", "%s: cannot write %llu bytes: %s", path,
                          (unsigned long long)(10 + (uint64_t)hlen + bytes), strerror(err));
    }
    return fp4lr_ok();
}

/* ---- expectations ---------------------------------------------------------------- */

fp4lr_status fp4lr_npy_expect(const fp4lr_npy *a, const char *path, unsigned dtypes, const char *type_text,
                              int ndim, const int64_t *want, const char *want_text)
{
    if (!(dtypes & FP4LR_NPY_MASK(a->dtype)))
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_DTYPE", "%s: expected %s, found dtype '%s'", path, type_text,
                          npy_dtypes[a->dtype].descr);
    if (ndim < 0)
        return fp4lr_ok();
    int match = a->ndim == ndim;
    for (int i = 0; match && i < ndim; i++)
        match = want[i] == FP4LR_NPY_ANY || want[i] == a->shape[i];
    if (!match) {
        char sh[160];
        fp4lr_npy_shape_text(a->ndim, a->shape, sh, sizeof sh);
        return fp4lr_fail(FP4LR_E_INVALID, "NPY_EXPECT_SHAPE", "%s: expected shape %s, found %s", path, want_text,
                          sh);
    }
    return fp4lr_ok();
}
