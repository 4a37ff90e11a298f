"""Data-subject requests (GDPR Art. 15 access, Art. 17 erasure) as the unit of work.

- `intake`: request table, validation, name resolution, a private person's facts, deadlines;
  `values`: a fact's value checked and stored by its datatype;
- `reference`: the reference tables an audit needs (stored by the platform, or the bundled sample);
- `audit`: one person's canaries and candidates, scored on one model, and what the model says;
- `answer`: verdicts in plain words and the answer document; `answer_files`: where answers live;
- `letter`: the letter, its PDF and technical annex, rendered from the document; `phrasing`: how
  it names a person's facts (second person, or third for a deceased person); `controller`: who answers.
"""
