"""Data-subject requests (GDPR Art. 15 access, Art. 17 erasure) as the unit of work.

- `intake`: request table, validation, name resolution, a private person's facts, deadlines;
- `reference`: the reference tables an audit needs (stored by the platform, or the bundled sample);
- `audit`: one person's canaries and candidates, scored on one model, and what the model says;
- `answer`: verdicts in plain words, the JSON document and the HTML letter.
"""
