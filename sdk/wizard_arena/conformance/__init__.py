"""The conformance room: the runner for language-neutral rules test vectors
(:mod:`.runner`) and the ``wizard-arena conformance`` verb (:mod:`.cmd_conformance`).

May import: the rules room only (so the verb never loads grpc).
"""
