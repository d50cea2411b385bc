import unittest

from intervals import merge, total_length


class MergeTest(unittest.TestCase):
    def test_touching_intervals_merge(self):
        self.assertEqual(merge([[1, 2], [2, 3]]), [[1, 3]])

    def test_overlapping_intervals_merge(self):
        self.assertEqual(merge([[1, 4], [2, 6], [8, 9]]), [[1, 6], [8, 9]])

    def test_disjoint_intervals_stay(self):
        self.assertEqual(merge([[5, 6], [1, 2]]), [[1, 2], [5, 6]])

    def test_contained_interval_is_absorbed(self):
        self.assertEqual(merge([[1, 10], [2, 3]]), [[1, 10]])

    def test_empty(self):
        self.assertEqual(merge([]), [])

    def test_total_length_counts_overlap_once(self):
        self.assertEqual(total_length([[0, 2], [1, 3], [2, 4]]), 4)


if __name__ == "__main__":
    unittest.main()
