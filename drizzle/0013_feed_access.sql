-- Slot reserved for one line of work in flight (issue 17: 0011, 18: 0012/0013, 19: 0014); edited in place until released.
SELECT 1;
