"""Merging closed intervals."""


def merge(intervals):
    """The union of closed intervals [start, end], as sorted disjoint intervals."""
    ordered = sorted(intervals)
    merged = []
    for start, end in ordered:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def total_length(intervals):
    """How much of the line the intervals cover."""
    return sum(end - start for start, end in merge(intervals))
