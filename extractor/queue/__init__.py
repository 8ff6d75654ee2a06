"""The human-in-the-loop correction queue: items, claims, corrections, audit, gold export.

queue = Queue(Path("out/queue.sqlite"))
item = queue.next_for("alice")                       # claims it
corrected, changes = apply_edits(item.extraction, {"expense[0].amount.value": "1200000"})
corrected.validation = validate(corrected, item_document(item, root))
queue.save(item.id, "alice", item.version, corrected, changes)
"""
