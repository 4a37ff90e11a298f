"""Reading Wikidata: the JSON dump in, the humans extract out (people, their claims, labels).

- `extract`: `read_dump(path)` -> `WikidataExtract` (humans, claims, labels, parse statistics),
  malformed lines counted and skipped up to a stated share; `load_property_metadata`;
- `dump_reader`: the fast path behind it (typed partial decoding, worker processes, Parquet spill,
  resumable shards); `entities`: the fields of one entity it keeps;
- `bzip2_blocks`: a `.bz2` dump cut at its compressed blocks, so separate steps read parts of it.
"""
