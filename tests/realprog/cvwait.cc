// SPDX-License-Identifier: MIT
// cvwait - std::condition_variable::wait_until(steady_clock) for a thread
// in std::this_thread::sleep_for (issue 13): the waiter wakes at the
// sleeper's time.  Prints the time in ms: 7000 on virtual time, 7 ms
// natively (SCALE 1000) and never earlier.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

int main(int argc, char **argv)
{
	long scale = argc > 1 ? std::atol(argv[1]) : 1;
	std::mutex m;
	std::condition_variable cv;
	bool done = false;
	auto nap = std::chrono::microseconds(7000000 / scale);
	auto t0 = std::chrono::steady_clock::now();
	std::thread th([&] {
		std::this_thread::sleep_for(nap);
		{
			std::lock_guard<std::mutex> g(m);
			done = true;
		}
		cv.notify_one();
	});
	std::unique_lock<std::mutex> l(m);
	bool woke = cv.wait_until(l, t0 + 60 * nap, [&] { return done; });
	auto dt = std::chrono::steady_clock::now() - t0;
	l.unlock();
	th.join();
	long long us = std::chrono::duration_cast<std::chrono::microseconds>(dt)
	                       .count();
	bool ok = woke && us >= 7000000 / scale &&
	          us < 7000000 / scale + 500000;
	std::printf("%s woke by the sleeper at %s\n", ok ? "ok  " : "FAIL",
	            us == 7000000 ? "7.000000 s exactly" : "its time");
	return ok ? 0 : 1;
}
