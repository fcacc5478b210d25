/* The size of a plain import's transactions, which follows the store's size. */
#include "ingest/import_impl.h"
#include "test.h"

TEST(test_batch_is_an_eighth_of_the_store_between_50000_and_1000000)
{
    CHECK_INT(bd_import_batch_rows(0), 50000);
    CHECK_INT(bd_import_batch_rows(400000), 50000);
    CHECK_INT(bd_import_batch_rows(800000), 100000);
    CHECK_INT(bd_import_batch_rows(4000000), 500000);
    CHECK_INT(bd_import_batch_rows(8000000), 1000000);
    CHECK_INT(bd_import_batch_rows(2000000000), 1000000);
}

int main(void)
{
    RUN(test_batch_is_an_eighth_of_the_store_between_50000_and_1000000);
    return test_failures != 0;
}
