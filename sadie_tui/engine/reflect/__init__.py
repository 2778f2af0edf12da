"""The learning loop: ``sadie reflect`` reads the person's notes and proposes what it believes
about them, each belief a claim with checked citations, and the person decides.

``run`` (batches, commits, budget) → ``prompt`` (the requests and their schemas) →
``evidence`` (quotes policed like a reply's citations) → ``sameness`` / ``judge`` / ``learn``
(one belief per idea, contradictions, what changes, the history of each change);
``decisions`` (accept, reject, edit), ``views`` (what the faces read), ``soul`` (a drafted
update of the soul summary, never written silently); ``beliefs`` holds the shapes.
"""
