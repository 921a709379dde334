/* wait_share: which shares the report shows (docs/report.md, "wait%"): the Wilson
 * interval at 3 standard deviations within 8 points on both sides. */
#include "../../src/analyze/wait_share.h"
#include "check.h"

int main(void)
{
    CHECK(wait_share(0, 0) < 0.0);      /* never sampled */
    CHECK(wait_share(10, 11) < 0.0);    /* more waiting ticks than ticks: not a share */
    /* a share near 0 or 1 needs about 100 ticks */
    CHECK(wait_share(103, 0) < 0.0);
    CHECK(wait_share(104, 0) == 0.0);
    CHECK(wait_share(104, 104) == 1.0);
    CHECK(wait_share(103, 103) < 0.0);
    /* one near a half about 350 */
    CHECK(wait_share(342, 171) < 0.0);
    CHECK(wait_share(344, 172) == 0.5);
    CHECK(wait_share(200, 20) < 0.0);
    CHECK(wait_share(1000, 990) == 0.99);
    return check_done("test_wait_share");
}
