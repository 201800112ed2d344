"""What the house writes itself from the ingested data, with the analytics' maths: the
scheduled analytics pass (intel.py: the desks publish their signals, the market regime and the
intelligence snapshot are stored), the desks' track record (track_record.py: signals closed on
the prices ingested after them, the kill state) and the morning brief (briefs.py). The
products sell what these write; the feeds and the analytics know nothing of them."""
